import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import *
cs = load_all()
for c in cs:
    c.Q2 = np.fromfile(f'{LAB}/{c.name}.qnoprefix', dtype='>f4').astype(np.float32).reshape(len(c.Q), -1)
def ids_of(l): return [d for d, _ in l]
def knn(c, q, depth=100):
    s = c.D @ q; idx = np.argpartition(-s, depth)[:depth]; idx = idx[np.argsort(-s[idx])]
    return [(c.docs[i], float(s[i])) for i in idx]
for name, mix in [('prefix (today)', 0.0), ('no prefix', 1.0), ('mean of both', 0.5), ('0.25 no-prefix', 0.25)]:
    def vec(c, r, mix=mix):
        i = c.qindex[r['qid']]; q = (1-mix)*c.Q[i] + mix*c.Q2[i]; q = q/np.linalg.norm(q); return knn(c, q)
    T, R = evaluate(cs, lambda c, r: ids_of(vec(c, r)[:10])); print(fmt('vectors, ' + name, T, R))
    for w in [0.7, 0.75, 0.8]:
        T, R = evaluate(cs, lambda c, r: ids_of(fuse(r['b'], vec(c, r), w, 10))); print(fmt(f'dbsf {w}, ' + name, T, R))
