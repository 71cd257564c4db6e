"""Per-query signals for the vector weight of the DBSF convex fusion (issue 16 follow-up).

Reads the bench's fusion-runs and fusion-lab/*.docs, *.queries, *.texts (Dump.java), computes
query-side, BM25-coverage, absolute-level and cross-list features per query, their Spearman
correlation with the per-query oracle weight on each collection's tune half, and fits simple
per-query weight rules on the tune halves (all three; and each collection held out in turn).
Run from the repository root: python3 bench/lab/fusion/signals.py   (numpy only)
"""
import math, os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import NAMES, LAB, load_runs, tuning, ndcg, dbsf
from porter import analyse

K1 = 1.2
GRID = np.round(np.arange(0, 1.0001, 0.01), 2)          # weights the rules may produce
ORACLE = np.round(np.arange(0, 1.0001, 0.05), 2)        # weights the oracle chooses from
QWORDS = {'what', 'how', 'who', 'whom', 'whose', 'when', 'where', 'which', 'why', 'is', 'are', 'was',
          'were', 'do', 'does', 'did', 'can', 'could', 'should', 'will', 'would', 'has', 'have'}


def fuse_rank(nb, nv, w, few, k=10):
    """Fusion.fuse with DBSF, as lab.fuse, precomputed normalised maps; top-k ids."""
    ww = min(w, 0.5) if few else w
    ids = set(nb) | set(nv)
    out = sorted(((-((1 - ww) * nb.get(d, 0) + ww * nv.get(d, 0)), d) for d in ids))
    return [d for _, d in out[:k]]


def spearman(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if len(x) < 3: return float('nan')
    def rk(a):
        o = np.argsort(a, kind='mergesort'); r = np.empty(len(a)); r[o] = np.arange(len(a))
        for v in np.unique(a):                   # average ranks for ties
            m = a == v
            if m.sum() > 1: r[m] = r[m].mean()
        return r
    rx, ry = rk(x), rk(y)
    if rx.std() == 0 or ry.std() == 0: return float('nan')
    return float(np.corrcoef(rx, ry)[0, 1])


class Coll:
    def __init__(self, name):
        self.name = name
        qs = [l.split('\t', 1) for l in open(f'{LAB}/{name}.queries').read().split('\n')[:-1]]
        self.qtext = {q[0]: q[1] for q in qs}
        self.terms = {}
        df = {}
        lens = []
        for line in open(f'{LAB}/{name}.texts').read().split('\n')[:-1]:
            d, t = line.split('\t', 1)
            toks = analyse(t)
            s = frozenset(toks)
            self.terms[d] = s
            lens.append(len(toks))
            for x in s: df[x] = df.get(x, 0) + 1
        self.N = len(self.terms)
        self.df = df
        self.runs = load_runs(name)
        for r in self.runs:
            r['tune'] = tuning(r['qid'])
            r['few'] = len(r['b']) < 100 and len(r['b']) <= 10
            nb = {d: x for (d, _), x in zip(r['b'], dbsf([s for _, s in r['b']]))} if r['b'] else {}
            nv = {d: x for (d, _), x in zip(r['v'], dbsf([s for _, s in r['v']]))} if r['v'] else {}
            r['nd'] = np.array([ndcg(fuse_rank(nb, nv, w, r['few']), r['g']) for w in GRID])
            r['vonly'] = ndcg([d for d, _ in r['v']], r['g'])
            o = np.array([r['nd'][int(round(w * 100))] for w in ORACLE])
            best = ORACLE[o >= o.max() - 1e-12]
            r['oracle'] = (best.min() + best.max()) / 2
            r['alltie'] = len(best) == len(ORACLE)
            r['pref'] = r['nd'][80:].mean() - r['nd'][40:71].mean()
            r['f'] = self.features(r)

    def idf(self, t):
        n = self.df.get(t, 0)
        return math.log(1 + (self.N - n + 0.5) / (n + 0.5))

    def features(self, r):
        text = self.qtext[r['qid']]
        toks = analyse(text)
        q = sorted(set(toks))
        present = [t for t in q if self.df.get(t, 0) > 0]
        idfs = np.array([self.idf(t) for t in present])
        f = {}
        f['n_terms'] = len(q)
        f['idf_mean'] = idfs.mean() if len(idfs) else np.nan
        f['idf_max'] = idfs.max() if len(idfs) else np.nan
        f['idf_min'] = idfs.min() if len(idfs) else np.nan
        f['absent'] = (len(q) - len(present)) / len(q) if q else np.nan
        first = [w for w in ''.join(c if c.isalnum() else ' ' for c in text.lower()).split()][:1]
        f['question'] = float(bool(first) and first[0] in QWORDS)
        tot = idfs.sum()
        def cov(d):
            s = self.terms.get(d, frozenset())
            return sum(i for t, i in zip(present, idfs) if t in s) / tot if tot > 0 else np.nan
        b, v = r['b'], r['v']
        f['cov_b1'] = cov(b[0][0]) if b else np.nan
        f['cov_b3'] = np.mean([cov(d) for d, _ in b[:3]]) if b else np.nan
        f['cov_v1'] = cov(v[0][0]) if v else np.nan                      # extra: the vector side's
        f['cov_v3'] = np.mean([cov(d) for d, _ in v[:3]]) if v else np.nan
        f['cov_b3-v3'] = f['cov_b3'] - f['cov_v3']                         # extra
        att = (K1 + 1) * tot
        f['b1/att'] = b[0][1] / att if b and att > 0 else np.nan
        f['b10/att'] = b[min(9, len(b) - 1)][1] / att if b and att > 0 else np.nan
        f['bgap/att'] = f['b1/att'] - f['b10/att']
        f['v_cos1'] = v[0][1]
        f['v_cos10'] = v[9][1]
        f['v_gap'] = v[0][1] - v[9][1]
        bi = {d: i for i, (d, _) in enumerate(b)}
        vi = {d: i for i, (d, _) in enumerate(v)}
        f['v10_in_b100'] = sum(d in bi for d, _ in v[:10]) / 10
        f['b10_in_v100'] = sum(d in vi for d, _ in b[:10]) / min(10, len(b)) if b else np.nan
        shared = [d for d in bi if d in vi]
        f['shared_rho'] = spearman([bi[d] for d in shared], [vi[d] for d in shared]) if len(shared) >= 5 else np.nan
        return f


def half_means(c, weights_fn):
    """weights_fn(run) -> weight; returns (tune mean, report mean)."""
    t, rp = [], []
    for r in c.runs:
        w = float(np.clip(round(weights_fn(r), 2), 0, 1))
        (t if r['tune'] else rp).append(r['nd'][int(round(w * 100))])
    return np.mean(t), np.mean(rp)


def main():
    colls = [Coll(n) for n in NAMES]
    p = print
    p('## Reproduction (DBSF, vector weight 0.75; vectors alone)')
    for c in colls:
        t, rp = half_means(c, lambda r: 0.75)
        vt = np.mean([r['vonly'] for r in c.runs if r['tune']]); vr = np.mean([r['vonly'] for r in c.runs if not r['tune']])
        ot = np.mean([r['nd'][int(round(r['oracle'] * 100))] for r in c.runs if r['tune']])
        orr = np.mean([r['nd'][int(round(r['oracle'] * 100))] for r in c.runs if not r['tune']])
        nt = sum(r['tune'] for r in c.runs)
        p(f'{c.name:10s} tune {t:.4f} report {rp:.4f} | vectors alone tune {vt:.4f} report {vr:.4f} | '
          f'oracle tune {ot:.4f} report {orr:.4f} | queries {nt}/{len(c.runs)-nt}, '
          f'all weights tie: {sum(r["alltie"] for r in c.runs if r["tune"])} tune')
    base = [half_means(c, lambda r: 0.75) for c in colls]
    p(f'mean tune {np.mean([b[0] for b in base]):.4f} report {np.mean([b[1] for b in base]):.4f}')

    feats = list(colls[0].runs[0]['f'])
    p('\n## Spearman with the oracle weight: tune halves, pooled tune; the same against the vector preference '
      '(mean nDCG@10 over w 0.80-1.00 minus over w 0.40-0.70), tune halves; oracle weight on the report halves')
    p('| feature | ' + ' | '.join(f'{c.name} tune' for c in colls) + ' | pooled tune | ' +
      ' | '.join(f'{c.name} tune pref' for c in colls) + ' | ' + ' | '.join(f'{c.name} report' for c in colls) + ' | qualifies |')
    qualified = []
    corr, pooled, rep = {}, {}, {}
    for f in feats:
        rs, rn, rr = [], [], []
        for c in colls:
            tr = [r for r in c.runs if r['tune']]
            rs.append(spearman([r['f'][f] for r in tr], [r['oracle'] for r in tr]))
            rn.append(spearman([r['f'][f] for r in tr], [r['pref'] for r in tr]))
            rp = [r for r in c.runs if not r['tune']]
            rr.append(spearman([r['f'][f] for r in rp], [r['oracle'] for r in rp]))
        ok = all(abs(x) >= 0.2 for x in rs) and (all(x > 0 for x in rs) or all(x < 0 for x in rs))
        corr[f] = rs
        rep[f] = rr
        alltr = [r for c in colls for r in c.runs if r['tune']]
        pooled[f] = spearman([r['f'][f] for r in alltr], [r['oracle'] for r in alltr])
        if ok: qualified.append(f)
        p(f'| {f} | ' + ' | '.join(f'{x:+.2f}' for x in rs) + f' | {pooled[f]:+.2f} | ' + ' | '.join(f'{x:+.2f}' for x in rn) +
          ' | ' + ' | '.join(f'{x:+.2f}' for x in rr) + f' | {"YES" if ok else "no"} |')
    p(f'qualifying features: {qualified or "none"}')
    for c in colls:
        nt = sum(r['tune'] for r in c.runs); nr = len(c.runs) - nt
        same = sum(1 for f in feats if not np.isnan(corr[f][NAMES.index(c.name)]) and not np.isnan(rep[f][NAMES.index(c.name)])
                   and np.sign(corr[f][NAMES.index(c.name)]) == np.sign(rep[f][NAMES.index(c.name)]))
        p(f'{c.name}: 95% band of r for no association: tune +-{1.96 / math.sqrt(nt - 1):.2f}, report +-{1.96 / math.sqrt(nr - 1):.2f}; '
          f'features whose sign agrees between tune and report: {same} of '
          f'{sum(1 for f in feats if not np.isnan(corr[f][NAMES.index(c.name)]) and not np.isnan(rep[f][NAMES.index(c.name)]))}')

    # rules: on the qualifying features; if none qualify, on the three with the largest pooled tune
    # |r| (which can also ride on differences between the collections), to show what a rule would
    # do, not because one is warranted
    cand = qualified or sorted(feats, key=lambda f: -abs(np.nan_to_num(pooled[f])))[:3]
    if not qualified:
        p('(no feature qualifies; rules below on the three with the largest pooled tune |r|, for illustration: '
          + ', '.join(f'{f} {pooled[f]:+.2f}' for f in cand) + ')')

    def fv(r, f):
        x = r['f'][f]
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else x

    def rules_for(f, fit_colls):
        pooled = np.array([fv(r, f) for c in fit_colls for r in c.runs if r['tune'] and fv(r, f) is not None])
        lo, hi = np.percentile(pooled, 5), np.percentile(pooled, 95)
        span = hi - lo if hi > lo else 1.0
        fr = [r for c in fit_colls for r in c.runs if r['tune']]
        sign = 1 if spearman([r['f'][f] for r in fr], [r['oracle'] for r in fr]) > 0 else -1
        out = {}
        # linear: w = clamp(a + b * (x - lo) / span), a = weight at the 5th percentile
        out['linear'] = [(a, b, (lambda a, b: lambda r: 0.75 if fv(r, f) is None else a + b * (fv(r, f) - lo) / span)(a, b))
                         for a in np.arange(0, 1.0001, 0.05) for b in np.arange(-1, 1.0001, 0.1)]
        # switch: 0.75 (the default) on one side of threshold t, w2 on the side the correlation points to
        ts = np.unique(np.percentile(pooled, np.arange(10, 91, 5)))
        sw = []
        for t in ts:
            for w2 in np.arange(0, 1.0001, 0.05):
                if sign > 0:
                    fn = (lambda t, w2: lambda r: 0.75 if fv(r, f) is None or fv(r, f) <= t else w2)(t, w2)
                else:
                    fn = (lambda t, w2: lambda r: 0.75 if fv(r, f) is None or fv(r, f) > t else w2)(t, w2)
                sw.append((t, w2, fn))
        out['switch'] = sw
        return out, lo, span, sign

    def fit(f, kind, fit_colls):
        rules, lo, span, sign = rules_for(f, fit_colls)
        best = None
        for a, b, fn in rules[kind]:
            m = np.mean([half_means(c, fn)[0] for c in fit_colls])
            if best is None or m > best[0] + 1e-12: best = (m, a, b, fn)
        return best, lo, span, sign

    p('\n## Rules (fitted on the mean of the three tune halves)')
    p('| rule | parameters | ' + ' | '.join(f'{c.name} tune | {c.name} report' for c in colls) + ' | mean tune | mean report |')
    p('| reference: 0.75 for all | - | ' + ' | '.join(f'{t:.4f} | {r:.4f}' for t, r in base) +
      f' | {np.mean([b[0] for b in base]):.4f} | {np.mean([b[1] for b in base]):.4f} |')
    held = []
    for f in cand:
        for kind in ('linear', 'switch'):
            (m, a, b, fn), lo, span, sign = fit(f, kind, colls)
            res = [half_means(c, fn) for c in colls]
            if kind == 'linear':
                par = f'w = clamp({a:.2f} + {b:+.2f} * ({f} - {lo:.4g}) / {span:.4g})'
            else:
                par = f'w = {b:.2f} if {f} {">" if sign > 0 else "<="} {a:.4g} else 0.75'
            p(f'| {kind} on {f} | {par} | ' + ' | '.join(f'{t:.4f} | {r:.4f}' for t, r in res) +
              f' | {np.mean([x[0] for x in res]):.4f} | {np.mean([x[1] for x in res]):.4f} |')
            # held out
            hrow = []
            for i, c in enumerate(colls):
                others = [x for j, x in enumerate(colls) if j != i]
                (m2, a2, b2, fn2), lo2, span2, sign2 = fit(f, kind, others)
                t, r = half_means(c, fn2)
                hrow.append((c.name, a2, b2, lo2, span2, t, r))
            held.append((f, kind, hrow))
    p('\n## Held out (fitted on the other two collections\' tune halves; scored on the third)')
    p('| rule | ' + ' | '.join(f'{c.name}: params | tune | report' for c in colls) + ' | mean tune | mean report |')
    for f, kind, hrow in held:
        cells = ' | '.join(f'{a:.3g}, {b:+.2f} | {t:.4f} | {r:.4f}' for _, a, b, _, _, t, r in hrow)
        p(f'| {kind} on {f} | {cells} | {np.mean([h[5] for h in hrow]):.4f} | {np.mean([h[6] for h in hrow]):.4f} |')
    p('(linear params: a, b of w = clamp(a + b * (x - p5) / (p95 - p5)), percentiles of the fitting queries; '
      'switch params: threshold, other weight)')


if __name__ == '__main__':
    main()
