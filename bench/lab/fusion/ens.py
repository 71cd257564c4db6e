"""A second embedding model beside bge-small: its exact top 100 fused with BM25 and bge's lists.

Reads the second model's vectors from the bench's vector cache (MiniDump.java / E5Dump.java write
them). Usage: python3 ens.py all-MiniLM-L6-v2-q   (or e5-small-v2-q)
"""
import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import *
import lab, itertools

MODEL = sys.argv[1] if len(sys.argv) > 1 else 'all-MiniLM-L6-v2-q'

def read_model(name, model):
    path = f'{WORK}/embeddings/{name}-{model}.vec'
    b = open(path, 'rb').read()
    n = struct.unpack('>H', b[:2])[0]; off = 2 + n
    nd, nq, dims = struct.unpack('>iii', b[off:off+12]); off += 12
    a = np.frombuffer(b, dtype='>f4', count=(nd+nq)*dims, offset=off).astype(np.float32).reshape(nd+nq, dims)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    return a[:nd], a[nd:]

cs = load_all()
for c in cs:
    D2, Q2 = read_model(c.name, MODEL)
    for r in c.runs:
        q = Q2[c.qindex[r['qid']]]
        s = D2 @ q
        idx = np.argpartition(-s, 100)[:100]; idx = idx[np.argsort(-s[idx])]
        r['v2'] = [(c.docs[i], float(s[i])) for i in idx]

def ids(lst): return [d for d, _ in lst]

def fuse3(lists, weights, limit=10):
    maps = [norm_map(l) for l in lists]
    keys = set().union(*maps)
    out = [(d, sum(w * m.get(d, 0) for w, m in zip(weights, maps))) for d in keys]
    out.sort(key=lambda x: (-x[1], x[0]))
    return ids(out[:limit])

def rrf3(lists, weights, k=60, limit=10):
    sc = {}
    for w, l in zip(weights, lists):
        for i, (d, _) in enumerate(l):
            sc[d] = sc.get(d, 0) + w / (k + i + 1)
    return [d for d, _ in sorted(sc.items(), key=lambda x: (-x[1], x[0]))[:limit]]

rows = []
def show(name, fn):
    T, R = evaluate(cs, fn); line = fmt(name, T, R); print(line); return T, R, line

show('bge vectors alone', lambda c, r: ids(r['v'][:10]))
show(f'{MODEL} vectors alone', lambda c, r: ids(r['v2'][:10]))
show('reference DBSF 0.75 (BM25, bge)', lambda c, r: ids(fuse(r['b'], r['v'], 0.75, 10)))
for w in [0.3, 0.4, 0.5, 0.6]:
    show(f'bge + {MODEL} DBSF, second weight {w} (no BM25)', lambda c, r, w=w: fuse3([r['v'], r['v2']], [1-w, w]))
grid = []
for wb in np.arange(0.0, 0.45, 0.05):
    for w2 in np.arange(0.0, 1.0001 - wb, 0.05):
        w1 = 1 - wb - w2
        T, R = evaluate(cs, lambda c, r: fuse3([r['b'], r['v'], r['v2']], [wb, w1, w2]))
        grid.append((T.mean(), fmt(f'DBSF three-way bm25 {wb:.2f} bge {w1:.2f} {MODEL} {w2:.2f}', T, R), R.mean()))
grid.sort(key=lambda x: -x[0])
print('-- three-way DBSF, best 12 by mean tune')
for t, line, r in grid[:12]: print(line)
print('-- report means spread:', min(g[2] for g in grid), max(g[2] for g in grid))
g2 = []
for k in [20, 60]:
    for wb in [0.2, 0.25, 0.3, 0.35]:
        for w2 in [0.2, 0.3, 0.4]:
            w1 = 1 - wb - w2
            T, R = evaluate(cs, lambda c, r: rrf3([r['b'], r['v'], r['v2']], [wb, w1, w2], k))
            g2.append((T.mean(), fmt(f'RRF three-way k {k} bm25 {wb:.2f} bge {w1:.2f} {MODEL} {w2:.2f}', T, R)))
g2.sort(key=lambda x: -x[0])
print('-- three-way RRF, best 5 by mean tune')
for t, line in g2[:5]: print(line)
