import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import *
import lab, itertools, sys
lab.NAMES = sys.argv[1].split(',') if len(sys.argv) > 1 else NAMES
cs = load_all()

def ids_of(lst): return [d for d, _ in lst]

def rerank(k, lam, w=0.75, weighted=False, mode='add'):
    def f(c, r):
        fu = fuse(r['b'], r['v'], w)
        top = [c.index[d] for d, _ in fu[:k]]
        if weighted:
            ws = np.array([s for _, s in fu[:k]]); cen = (c.D[top] * ws[:, None]).sum(0) / ws.sum()
        else:
            cen = c.D[top].mean(0)
        cen /= np.linalg.norm(cen)
        idx = [c.index[d] for d, _ in fu]
        if mode == 'add':
            p = dbsf(c.D[idx] @ cen)
            sc = [(d, s + lam * x) for (d, s), x in zip(fu, p)]
        else:  # replace vector side by Rocchio-vector similarity over the union
            qq = r['qv'] + lam * cen; qq /= np.linalg.norm(qq)
            vs = c.D[idx] @ qq
            vl = sorted([(d, float(x)) for (d, _), x in zip(fu, vs)], key=lambda t: -t[1])
            return ids_of(fuse(r['b'], vl, w, 10))
        sc.sort(key=lambda t: (-t[1], t[0]))
        return ids_of(sc[:10])
    return f

def rocchio(k, a, w=0.75, depth=100):
    def f(c, r):
        fu = fuse(r['b'], r['v'], w)
        top = [c.index[d] for d, _ in fu[:k]]
        cen = c.D[top].mean(0)
        qq = r['qv'] + a * cen; qq /= np.linalg.norm(qq)
        s = c.D @ qq; idx = np.argpartition(-s, depth)[:depth]; idx = idx[np.argsort(-s[idx])]
        vl = [(c.docs[i], float(s[i])) for i in idx]
        return ids_of(fuse(r['b'], vl, w, 10))
    return f

T, R = evaluate(cs, lambda c, r: ids_of(fuse(r['b'], r['v'], 0.75, 10)))
print(fmt('baseline dbsf .75', T, R))
res = []
for k in [3, 5, 10, 20]:
    for lam in [0.1, 0.2, 0.3, 0.5, 0.75, 1.0]:
        for name, fn in [('rerank-add', rerank(k, lam)), ('rerank-replace', rerank(k, lam, mode='rep')), ('rocchio-knn', rocchio(k, lam))]:
            T, R = evaluate(cs, fn)
            res.append((T.mean(), fmt(f'{name} k={k} a={lam}', T, R)))
for m, line in sorted(res, reverse=True)[:25]:
    print(line)
