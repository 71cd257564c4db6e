"""Porter (1980) stemmer, plain Python, for the lab's simple analyser (signals.py)."""
import re

_V = set('aeiou')

def _cons(w, i):
    c = w[i]
    if c in _V: return False
    if c == 'y': return i == 0 or not _cons(w, i - 1)
    return True

def _m(stem):
    n, i, L = 0, 0, len(stem)
    while i < L and _cons(stem, i): i += 1
    while i < L:
        while i < L and not _cons(stem, i): i += 1
        if i >= L: break
        n += 1
        while i < L and _cons(stem, i): i += 1
    return n

def _hasv(stem):
    return any(not _cons(stem, i) for i in range(len(stem)))

def _dc(w):
    return len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1)

def _cvc(w):
    L = len(w)
    return L >= 3 and _cons(w, L-1) and not _cons(w, L-2) and _cons(w, L-3) and w[-1] not in 'wxy'

def _rep(w, rules, cond):
    for suf, rep in rules:
        if w.endswith(suf):
            stem = w[:len(w) - len(suf)]
            return stem + rep if cond(stem) else w
    return w

_S2 = [('ational', 'ate'), ('tional', 'tion'), ('enci', 'ence'), ('anci', 'ance'), ('izer', 'ize'),
       ('abli', 'able'), ('alli', 'al'), ('entli', 'ent'), ('eli', 'e'), ('ousli', 'ous'),
       ('ization', 'ize'), ('ation', 'ate'), ('ator', 'ate'), ('alism', 'al'), ('iveness', 'ive'),
       ('fulness', 'ful'), ('ousness', 'ous'), ('aliti', 'al'), ('iviti', 'ive'), ('biliti', 'ble')]
_S2.sort(key=lambda x: -len(x[0]))
_S3 = [('icate', 'ic'), ('ative', ''), ('alize', 'al'), ('iciti', 'ic'), ('ical', 'ic'), ('ful', ''), ('ness', '')]
_S3.sort(key=lambda x: -len(x[0]))
_S4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou',
       'ism', 'ate', 'iti', 'ous', 'ive', 'ize']
_S4.sort(key=lambda x: -len(x))

def stem(w):
    if len(w) <= 2: return w
    # 1a
    if w.endswith('sses'): w = w[:-2]
    elif w.endswith('ies'): w = w[:-2]
    elif w.endswith('ss'): pass
    elif w.endswith('s'): w = w[:-1]
    # 1b
    flag = False
    if w.endswith('eed'):
        if _m(w[:-3]) > 0: w = w[:-1]
    elif w.endswith('ed') and _hasv(w[:-2]): w = w[:-2]; flag = True
    elif w.endswith('ing') and _hasv(w[:-3]): w = w[:-3]; flag = True
    if flag:
        if w.endswith(('at', 'bl', 'iz')): w += 'e'
        elif _dc(w) and w[-1] not in 'lsz': w = w[:-1]
        elif _m(w) == 1 and _cvc(w): w += 'e'
    # 1c
    if w.endswith('y') and _hasv(w[:-1]): w = w[:-1] + 'i'
    w = _rep(w, _S2, lambda s: _m(s) > 0)
    w = _rep(w, _S3, lambda s: _m(s) > 0)
    for suf in _S4:
        if w.endswith(suf):
            s = w[:len(w) - len(suf)]
            if _m(s) > 1 and (suf != 'ion' or (s and s[-1] in 'st')): w = s
            break
    if w.endswith('e'):
        s = w[:-1]
        if _m(s) > 1 or (_m(s) == 1 and not _cvc(s)): w = s
    if _m(w) > 1 and _dc(w) and w.endswith('l'): w = w[:-1]
    return w

# PostgreSQL's english.stop (the Snowball list), which is what to_tsvector('english', ...) drops
STOP = set("""i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom this that
these those am is are was were be been being have has had having do does did doing a an the and but
if or because as until while of at by for with about against between into through during before
after above below to from up down in out on off over under again further then once here there when
where why how all any both each few more most other some such no nor not only own same so than too
very s t can will just don should now""".split())

_TOK = re.compile(r'[a-z0-9]+')
_cache = {}

def analyse(text):
    out = []
    for t in _TOK.findall(text.lower()):
        if t in STOP: continue
        s = _cache.get(t)
        if s is None: s = _cache[t] = stem(t)
        out.append(s)
    return out
