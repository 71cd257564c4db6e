import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import *
cs = load_all()
def ids_of(l): return [d for d, _ in l]
# per query features over the union: dbsf b, dbsf v, rrf b, rrf v (k=60, scaled x60), prf-centroid sim (k=3, dbsf)
for c in cs:
    for r in c.runs:
        nb, nv = norm_map(r['b']), norm_map(r['v'])
        rb = {d: 60.0/(60+i+1) for i, (d, _) in enumerate(r['b'])}
        rv = {d: 60.0/(60+i+1) for i, (d, _) in enumerate(r['v'])}
        fu = fuse(r['b'], r['v'], 0.75)
        ids = [d for d, _ in fu]
        cen = c.D[[c.index[d] for d in ids[:3]]].mean(0); cen /= np.linalg.norm(cen)
        p = dbsf(c.D[[c.index[d] for d in ids]] @ cen)
        F = np.array([[nb.get(d, 0), nv.get(d, 0), rb.get(d, 0), rv.get(d, 0), x] for d, x in zip(ids, p)])
        r['F'], r['ids'] = F, ids
def score(w, colls, half):
    out = []
    for c in colls:
        v = []
        for r in c.runs:
            if r['tune'] != half: continue
            s = r['F'] @ w
            o = sorted(range(len(s)), key=lambda i: (-s[i], r['ids'][i]))[:10]
            v.append(ndcg([r['ids'][i] for i in o], r['g']))
        out.append(np.mean(v))
    return np.array(out)
def ascend(colls, w0, names):
    w = np.array(w0, float); best = score(w, colls, True).mean()
    for it in range(3):
        for j in range(len(w)):
            for val in np.arange(0, 1.01, 0.05):
                w2 = w.copy(); w2[j] = val
                m = score(w2, colls, True).mean()
                if m > best + 1e-9: best, w = m, w2
    return w
w0 = [0.25, 0.75, 0, 0, 0]
print(fmt('dbsf .75 (start)', score(np.array(w0), cs, True), score(np.array(w0), cs, False)))
w = ascend(cs, w0, None)
print('learned on all three tune halves', np.round(w, 2))
print(fmt('learned linear (b, v, rrf b, rrf v, prf)', score(w, cs, True), score(w, cs, False)))
for held in range(3):
    others = [c for i, c in enumerate(cs) if i != held]
    wh = ascend(others, w0, None)
    print('held out', cs[held].name, np.round(wh, 2), 'tune %.4f report %.4f' % (score(wh, [cs[held]], True)[0], score(wh, [cs[held]], False)[0]))
