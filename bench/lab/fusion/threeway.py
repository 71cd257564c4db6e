# BM25, the vector list and a Rocchio list (q + a x centroid of the fused top k, second exact kNN), each
# DBSF-scaled, combined with three weights summing to 1 (steps of 0.05), chosen on the tune halves.
import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import *
cs = load_all()
def knn(c, q, depth=100):
    s = c.D @ q; idx = np.argpartition(-s, depth)[:depth]; idx = idx[np.argsort(-s[idx])]
    return [(c.docs[i], float(s[i])) for i in idx]
def three(b, v, p, wb, wv, wp):
    nb, nv, npf = norm_map(b), norm_map(v), norm_map(p)
    ids = set(nb) | set(nv) | set(npf)
    out = sorted(((d, wb*nb.get(d, 0) + wv*nv.get(d, 0) + wp*npf.get(d, 0)) for d in ids), key=lambda t: (-t[1], t[0]))
    return [d for d, _ in out[:10]]
for k, a in [(3, 0.5), (3, 1.0), (5, 1.0), (10, 1.0)]:
    for c in cs:
        for r in c.runs:
            fu = fuse(r['b'], r['v'], 0.75)
            cen = c.D[[c.index[d] for d, _ in fu[:k]]].mean(0)
            q = r['qv'] + a * cen; q /= np.linalg.norm(q)
            r['p'] = knn(c, q)
    best = None
    for i in range(21):
        for j in range(21 - i):
            wb, wv, wp = i/20, j/20, (20-i-j)/20
            T, R = evaluate(cs, lambda c, r: three(r['b'], r['v'], r['p'], wb, wv, wp))
            if best is None or T.mean() > best[0].mean() + 1e-9: best = (T, R, (wb, wv, wp))
    print(fmt(f'three-way k {k} a {a} weights {best[2]}', best[0], best[1]), flush=True)
