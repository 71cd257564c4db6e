# Score regularisation over the candidate set (cluster hypothesis): each fused candidate's score is
# mixed with its nearest candidates' scores (cosine of the stored chunk vectors).
import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import *
import lab
cs = load_all()

def ids_of(lst): return [d for d, _ in lst]

def smooth(alpha, k, w=0.75, depth=None, power=1.0):
    def f(c, r):
        fu = fuse(r['b'], r['v'], w)
        if depth: fu = fu[:depth]
        idx = [c.index[d] for d, _ in fu]
        X = c.D[idx]; X = X / np.linalg.norm(X, axis=1, keepdims=True)
        S = X @ X.T
        np.fill_diagonal(S, -np.inf)
        kk = min(k, len(idx) - 1)
        nn = np.argpartition(-S, kk, axis=1)[:, :kk]
        f0 = np.array([s for _, s in fu])
        sims = np.take_along_axis(S, nn, 1).clip(min=0) ** power
        nb = (sims * f0[nn]).sum(1) / np.maximum(sims.sum(1), 1e-9)
        g = (1 - alpha) * f0 + alpha * nb
        order = np.lexsort((np.array(ids_of(fu)), -g))
        return [fu[i][0] for i in order[:10]]
    return f

T, R = evaluate(cs, lambda c, r: ids_of(fuse(r['b'], r['v'], 0.75, 10)))
print(fmt('baseline dbsf .75', T, R))
T, R = evaluate(cs, lambda c, r: ids_of(r['v'][:10]))
print(fmt('vectors alone', T, R))
res = []
for alpha in [0.1, 0.2, 0.3, 0.5]:
    for k in [3, 5, 10, 20]:
        for w in [0.75]:
            for depth in [None, 30]:
                T, R = evaluate(cs, smooth(alpha, k, w, depth))
                res.append((T.mean(), fmt(f'smooth a={alpha} k={k} w={w} depth={depth}', T, R)))
for m, line in sorted(res, reverse=True)[:15]:
    print(line)

def within_vec(n, w=0.75):
    def f(c, r):
        vt = set(d for d, _ in r['v'][:n])
        fu = [x for x in fuse(r['b'], r['v'], w) if x[0] in vt]
        return ids_of(fu[:10])
    return f

def resort(n, w=0.75, mix=0.0):
    def f(c, r):
        fu = fuse(r['b'], r['v'], w)[:n]
        vs = {d: s for d, s in r['v']}
        qv = r['qv'] / np.linalg.norm(r['qv'])
        sc = []
        for d, s in fu:
            x = c.D[c.index[d]]; cos = float(x @ qv / np.linalg.norm(x))
            sc.append((d, cos + mix * s))
        sc.sort(key=lambda t: (-t[1], t[0]))
        return ids_of(sc[:10])
    return f
res = []
for n in [10, 15, 20, 30, 50]:
    T, R = evaluate(cs, within_vec(n)); res.append((T.mean(), fmt(f'within vector top {n}', T, R)))
    for mix in [0.0, 0.05, 0.1, 0.2]:
        T, R = evaluate(cs, resort(n, mix=mix)); res.append((T.mean(), fmt(f'fused top {n} resorted by cosine + {mix} fused', T, R)))
for m, line in sorted(res, reverse=True)[:15]:
    print(line)
