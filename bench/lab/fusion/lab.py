import numpy as np, struct, zlib, math, sys, os
WORK = os.environ.get('BW', 'bench/target/bench-work')
LAB = os.environ.get('LAB', WORK + '/fusion-lab')
NAMES = ['vaswani', 'cranfield', 'msmarco']

def read_vec(name):
    path = f'{WORK}/embeddings/{name}-bge-small-en-v1.5-q.vec'
    if not os.path.exists(path):
        import glob
        path = glob.glob(f'{WORK}/embeddings/{name}-*.vec')[0]
    b = open(path, 'rb').read()
    n = struct.unpack('>H', b[:2])[0]; off = 2 + n
    nd, nq, dims = struct.unpack('>iii', b[off:off+12]); off += 12
    a = np.frombuffer(b, dtype='>f4', count=(nd+nq)*dims, offset=off).astype(np.float32).reshape(nd+nq, dims)
    return a[:nd], a[nd:]

def tuning(qid):
    return (zlib.crc32(qid.encode()) & 1) == 0

def load_runs(name):
    lines = open(f'{WORK}/fusion-runs/{name}.tsv').read().split('\n')
    runs = []
    for i in range(0, len(lines) - 2, 3):
        sides = []
        for k in range(3):
            f = lines[i+k].split('\t')
            sides.append([(p.split(' ')[0], float(p.split(' ')[1])) for p in f[2:]])
        runs.append(dict(qid=lines[i].split('\t')[0], b=sides[0], v=sides[1], g={d: int(s) for d, s in sides[2]}))
    return runs

class Coll:
    def __init__(self, name):
        self.name = name
        self.docs = open(f'{LAB}/{name}.docs').read().split('\n')[:-1]
        self.index = {d: i for i, d in enumerate(self.docs)}
        qs = [l.split('\t', 1) for l in open(f'{LAB}/{name}.queries').read().split('\n')[:-1]]
        self.qindex = {q[0]: i for i, q in enumerate(qs)}
        self.qtext = {q[0]: q[1] for q in qs}
        self.D, self.Q = read_vec(name)
        self.runs = load_runs(name)
        for r in self.runs:
            r['qv'] = self.Q[self.qindex[r['qid']]]
            r['tune'] = tuning(r['qid'])

def ndcg(ranking, g, k=10):
    dcg = sum(max(0, g.get(d, 0)) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted([x for x in g.values() if x > 0], reverse=True)[:k]
    idcg = sum(x / math.log2(i + 2) for i, x in enumerate(ideal))
    return 0 if idcg == 0 else dcg / idcg

def dbsf(scores):
    s = np.asarray(scores, dtype=np.float64)
    if len(s) == 0: return s
    m, sd = s.mean(), s.std()
    if sd <= 0: return np.ones_like(s)
    return np.clip((s - (m - 3*sd)) / (6*sd), 0, 1)

def norm_map(lst, fn=dbsf):
    if not lst: return {}
    v = fn([s for _, s in lst])
    return {d: x for (d, _), x in zip(lst, v)}

def fuse(b, v, w=0.75, limit=None, candidates=100):
    few = len(b) < candidates and len(b) <= 10
    ww = min(w, 0.5) if few else w
    nb, nv = norm_map(b), norm_map(v)
    ids = set(nb) | set(nv)
    out = [(d, (1-ww)*nb.get(d, 0) + ww*nv.get(d, 0)) for d in ids]
    out.sort(key=lambda x: (-x[1], x[0]))
    return out[:limit] if limit else out

def evaluate(colls, ranker):
    """ranker(coll, run) -> list of ids; returns (tune[], report[]) per collection"""
    T, R = [], []
    for c in colls:
        t, r = [], []
        for run in c.runs:
            (t if run['tune'] else r).append(ndcg(ranker(c, run), run['g']))
        T.append(np.mean(t)); R.append(np.mean(r))
    return np.array(T), np.array(R)

def fmt(name, T, R):
    cells = ' | '.join(f'{t:.4f} | {r:.4f}' for t, r in zip(T, R))
    return f'| {name} | {cells} | {T.mean():.4f} | {R.mean():.4f} |'

def load_all():
    return [Coll(n) for n in NAMES]
