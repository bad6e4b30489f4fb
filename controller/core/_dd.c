/* The double-dummy search of controller/core/double_dummy.py, compiled.
 *
 * The same search, card for card: the same zero-window alpha-beta, the same
 * transposition table on trick boundaries (the cards of each suit renumbered among
 * the cards left, with the leader), the same equivalent cards, quick tricks, misère
 * bounds (a lone ducking seat that escapes or is caught) and move order, so it visits
 * the same nodes and gives the same answers; double_dummy.py is the reference, this is
 * only its speed (a whole analysis 11 to 27 times faster on bench/bench_analysis.py).
 *
 * The rules stay the deal's own: who takes a full trick is asked of the Python solver
 * (``winner(plan, laid)``) once for each distinct trick -- the same cards laid by the same
 * zones in the same order, whatever the trick's number -- and what follows a trick won by
 * a seat (``follow(plan, winner)``: counted or not, the next trick's order of play) once
 * for each trick number and winner; both are remembered here.  Pure computation: no I/O.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PRIKUP_ZONE 3
#define MAX_PLANS 256
#define MAX_WINNERS 8

static uint8_t PEXT[65536];

typedef struct {
    int known;
    int trick;
    int n;
    int order[4];
    int zones;                  /* the order of play as one number, the trick's number left out */
    int next[MAX_WINNERS];      /* the next trick's plan, by the winner's number (-1: not asked yet) */
    int won[MAX_WINNERS];
} Plan;

/* open addressing, keys never 0 (stored +1) */
typedef struct {
    uint64_t a, b;          /* a == 0: empty */
    int8_t lo, hi, best;
} TTEntry;

typedef struct {
    uint64_t key;           /* 0: empty */
    int32_t won, next;
} TrickEntry;

typedef struct {
    uint64_t key;           /* 0: empty */
    int32_t card;
} Killer;

typedef struct {
    PyObject_HEAD
    uint32_t hands[3];
    int zone_max[3], zone_counted[3], wants[3];
    int trump;
    uint8_t allowed[4][16];
    uint32_t pending[12], after[12];
    int prikup[12];
    int nprikup;
    int quick_side, duck_seat;
    PyObject *winner, *follow;
    Plan plans[MAX_PLANS];
    TTEntry *tt; size_t tt_cap, tt_used;
    TrickEntry *tm; size_t tm_cap, tm_used;
    Killer *km; size_t km_cap, km_used;
    long long nodes;
    int error;
} Search;

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return x;
}

/* --- tables ------------------------------------------------------------------- */

static TTEntry *tt_find(Search *s, uint64_t a, uint64_t b, int insert) {
    if (insert && (s->tt_used + 1) * 2 > s->tt_cap) {
        size_t cap = s->tt_cap ? s->tt_cap * 2 : 1 << 14;
        TTEntry *t = calloc(cap, sizeof(TTEntry));
        if (!t) { s->error = 1; PyErr_NoMemory(); return NULL; }
        for (size_t i = 0; i < s->tt_cap; i++) {
            TTEntry *e = &s->tt[i];
            if (!e->a) continue;
            size_t j = mix(e->a ^ mix(e->b)) & (cap - 1);
            while (t[j].a) j = (j + 1) & (cap - 1);
            t[j] = *e;
        }
        free(s->tt);
        s->tt = t; s->tt_cap = cap;
    }
    if (!s->tt_cap) return NULL;
    size_t j = mix(a ^ mix(b)) & (s->tt_cap - 1);
    while (s->tt[j].a) {
        if (s->tt[j].a == a && s->tt[j].b == b) return &s->tt[j];
        j = (j + 1) & (s->tt_cap - 1);
    }
    if (!insert) return NULL;
    s->tt[j].a = a; s->tt[j].b = b; s->tt[j].best = -1;
    s->tt_used++;
    return &s->tt[j];
}

static TrickEntry *tm_find(Search *s, uint64_t key, int insert) {
    if (insert && (s->tm_used + 1) * 2 > s->tm_cap) {
        size_t cap = s->tm_cap ? s->tm_cap * 2 : 1 << 12;
        TrickEntry *t = calloc(cap, sizeof(TrickEntry));
        if (!t) { s->error = 1; PyErr_NoMemory(); return NULL; }
        for (size_t i = 0; i < s->tm_cap; i++) {
            if (!s->tm[i].key) continue;
            size_t j = mix(s->tm[i].key) & (cap - 1);
            while (t[j].key) j = (j + 1) & (cap - 1);
            t[j] = s->tm[i];
        }
        free(s->tm);
        s->tm = t; s->tm_cap = cap;
    }
    if (!s->tm_cap) return NULL;
    size_t j = mix(key) & (s->tm_cap - 1);
    while (s->tm[j].key) {
        if (s->tm[j].key == key) return &s->tm[j];
        j = (j + 1) & (s->tm_cap - 1);
    }
    if (!insert) return NULL;
    s->tm[j].key = key;
    s->tm_used++;
    return &s->tm[j];
}

static Killer *km_find(Search *s, uint64_t key, int insert) {
    if (insert && (s->km_used + 1) * 2 > s->km_cap) {
        size_t cap = s->km_cap ? s->km_cap * 2 : 1 << 12;
        Killer *t = calloc(cap, sizeof(Killer));
        if (!t) { s->error = 1; PyErr_NoMemory(); return NULL; }
        for (size_t i = 0; i < s->km_cap; i++) {
            if (!s->km[i].key) continue;
            size_t j = mix(s->km[i].key) & (cap - 1);
            while (t[j].key) j = (j + 1) & (cap - 1);
            t[j] = s->km[i];
        }
        free(s->km);
        s->km = t; s->km_cap = cap;
    }
    if (!s->km_cap) return NULL;
    size_t j = mix(key) & (s->km_cap - 1);
    while (s->km[j].key) {
        if (s->km[j].key == key) return &s->km[j];
        j = (j + 1) & (s->km_cap - 1);
    }
    if (!insert) return NULL;
    s->km[j].key = key;
    s->km_used++;
    return &s->km[j];
}

/* a trick's cards so far as one key: their count, then 5 bits a card */
static inline uint64_t laid_key(const int *laid, int n) {
    uint64_t key = (uint64_t)n + 1;
    for (int i = 0; i < n; i++) key = key << 5 | (uint64_t)laid[i];
    return key;
}

/* --- the rules, asked of the Python solver ---------------------------------------- */

static int set_plan(Search *s, int id, PyObject *trick, PyObject *order) {
    if (id < 0 || id >= MAX_PLANS) { PyErr_SetString(PyExc_ValueError, "too many plans"); return -1; }
    Plan *p = &s->plans[id];
    if (p->known) return 0;
    Py_ssize_t n = PyTuple_Size(order);
    if (n < 0) return -1;
    if (n > 4) { PyErr_SetString(PyExc_ValueError, "a trick of more than 4 cards"); return -1; }
    p->trick = (int)PyLong_AsLong(trick);
    p->n = (int)n;
    p->zones = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        p->order[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(order, i));
        if (p->order[i] < 0 || p->order[i] > 3) { PyErr_SetString(PyExc_ValueError, "a zone"); return -1; }
        p->zones = p->zones << 2 | p->order[i];
    }
    if (PyErr_Occurred()) return -1;
    for (int w = 0; w < MAX_WINNERS; w++) p->next[w] = -1;
    p->known = 1;
    return 0;
}

/* (1 if the counted side takes it, the next trick's plan) of a full trick; -1 on error */
static int resolve(Search *s, int plan, const int *laid, int n, int *won) {
    Plan *p = &s->plans[plan];
    uint64_t key = (uint64_t)p->zones << 24 | laid_key(laid, n);
    TrickEntry *e = tm_find(s, key, 0);
    int w;
    if (e) {
        w = e->won;
    } else {
        PyObject *cards = PyTuple_New(n);
        if (!cards) { s->error = 1; return -1; }
        for (int i = 0; i < n; i++) PyTuple_SET_ITEM(cards, i, PyLong_FromLong(laid[i]));
        PyObject *r = PyObject_CallFunction(s->winner, "iO", plan, cards);
        Py_DECREF(cards);
        if (!r) { s->error = 1; return -1; }
        w = (int)PyLong_AsLong(r);
        Py_DECREF(r);
        if (PyErr_Occurred()) { s->error = 1; return -1; }
        if (w < 0 || w >= MAX_WINNERS) { PyErr_SetString(PyExc_ValueError, "too many winners"); s->error = 1; return -1; }
        e = tm_find(s, key, 1);
        if (!e) return -1;
        e->won = w;
    }
    if (p->next[w] < 0) {
        PyObject *r = PyObject_CallFunction(s->follow, "ii", plan, w);
        if (!r) { s->error = 1; return -1; }
        int taken, next;
        PyObject *trick, *order;
        if (!PyArg_ParseTuple(r, "iiOO", &taken, &next, &trick, &order) || set_plan(s, next, trick, order) < 0) {
            Py_DECREF(r); s->error = 1; return -1;
        }
        Py_DECREF(r);
        p->won[w] = taken;
        p->next[w] = next;
    }
    *won = p->won[w];
    return p->next[w];
}

/* --- the search ------------------------------------------------------------------- */

static int play(Search *s, int plan, int i, int *laid, uint32_t present, int k, int has_key, uint64_t ka, uint64_t kb);

static int quick(Search *s, int leader) {
    uint32_t h = s->hands[leader];
    uint32_t o1 = s->hands[(leader + 1) % 3], o2 = s->hands[(leader + 2) % 3];
    uint32_t o = o1 | o2;
    int total = 0;
    if (s->trump < 0) {
        for (int sh = 0; sh < 32; sh += 8) {
            uint32_t hs = h >> sh & 255;
            if (hs) {
                uint32_t os = o >> sh & 255;
                int bl = os ? 32 - __builtin_clz(os) : 0;
                total += __builtin_popcount(hs >> bl);
            }
        }
        return total;
    }
    int tsh = s->trump << 3;
    uint32_t ht = h >> tsh & 255, t1 = o1 >> tsh & 255, t2 = o2 >> tsh & 255;
    uint32_t tt = t1 | t2;
    int top_trumps = __builtin_popcount(ht >> (tt ? 32 - __builtin_clz(tt) : 0));
    int c1 = __builtin_popcount(t1), c2 = __builtin_popcount(t2);
    int drawn = (c1 > c2 ? c1 : c2) <= top_trumps;
    total = drawn ? __builtin_popcount(ht) : top_trumps;
    for (int sh = 0; sh < 32; sh += 8) {
        if (sh == tsh) continue;
        uint32_t hs = h >> sh & 255;
        if (!hs) continue;
        uint32_t os = o >> sh & 255;
        int wins = __builtin_popcount(hs >> (os ? 32 - __builtin_clz(os) : 0));
        if (wins && !drawn) {
            if ((t1 && __builtin_popcount(o1 >> sh & 255) < wins) || (t2 && __builtin_popcount(o2 >> sh & 255) < wins))
                continue;
        }
        total += wins;
    }
    return total;
}

static int escapes(Search *s) {
    int d = s->duck_seat;
    uint32_t h = s->hands[d], o = s->hands[(d + 1) % 3] | s->hands[(d + 2) % 3];
    for (int sh = 0; sh < 32; sh += 8) {
        uint32_t hs = h >> sh & 255;
        if (!hs) continue;
        uint32_t os = o >> sh & 255;
        while (hs && os) {
            uint32_t low = hs & -hs, other = os & -os;
            if (low > other) return 0;
            hs ^= low; os ^= other;
        }
    }
    return 1;
}

static int caught(Search *s, int leader) {
    int d = s->duck_seat;
    uint32_t h = s->hands[d], o = s->hands[(d + 1) % 3] | s->hands[(d + 2) % 3];
    for (int sh = 0; sh < 32; sh += 8) {
        uint32_t hs = h >> sh & 255;
        if (hs && (hs & -hs) < (o >> sh & 255)) return 0;
    }
    if (leader == d) return 1;
    uint32_t lead = s->hands[leader];
    for (int sh = 0; sh < 32; sh += 8)
        if ((h >> sh & 255) && (lead >> sh & 255)) return 1;
    return 0;
}

static int boundary(Search *s, int plan, int k) {
    if (k <= 0) return 1;
    uint32_t h0 = s->hands[0], h1 = s->hands[1], h2 = s->hands[2];
    int r = __builtin_popcount(h0);
    if (k > r) return 0;
    Plan *p = &s->plans[plan];
    int t = p->trick;
    uint32_t pend = t < 12 ? s->pending[t] : 0;
    if (r == 1 && !pend) {
        int cards[3] = {31 - __builtin_clz(h0), 31 - __builtin_clz(h1), 31 - __builtin_clz(h2)};
        int laid[4];
        for (int i = 0; i < p->n; i++) laid[i] = cards[p->order[i]];
        int won;
        if (resolve(s, plan, laid, p->n, &won) < 0) return 0;
        return won >= k;
    }
    int leader = p->order[0];
    uint32_t u = h0 | h1 | h2 | pend;
    /* the key: per suit the count of cards left and the three hands renumbered among them */
    uint64_t ka = 0, kb = (uint64_t)leader;
    for (int sh = 0; sh < 32; sh += 8) {
        int base = (u >> sh & 255) << 8;
        uint64_t part = (uint64_t)PEXT[base | (h0 >> sh & 255)] << 16 | (uint64_t)PEXT[base | (h1 >> sh & 255)] << 8
                        | PEXT[base | (h2 >> sh & 255)];
        if (sh < 16) ka = ka << 24 | part; else kb = kb << 24 | part;
        ka = ka << 4 | (uint64_t)__builtin_popcount(u >> sh & 255);
    }
    ka += 1;        /* never 0 */
    TTEntry *e = tt_find(s, ka, kb, 0);
    int lo, hi;
    if (!e) { lo = 0; hi = r; }
    else {
        lo = e->lo; hi = e->hi;
        if (lo >= k) return 1;
        if (hi < k) return 0;
    }
    if (s->duck_seat >= 0 && leader != PRIKUP_ZONE) {
        if (leader != s->duck_seat && escapes(s)) {
            e = tt_find(s, ka, kb, 1); if (!e) return 0;
            e->lo = lo; e->hi = 0;
            return 0;
        }
        if (caught(s, leader)) {
            e = tt_find(s, ka, kb, 1); if (!e) return 0;
            e->lo = r; e->hi = hi;
            return 1;
        }
    }
    if (s->quick_side && leader != PRIKUP_ZONE) {
        int q = quick(s, leader);
        if (q > r) q = r;
        if (s->zone_counted[leader]) {
            if (q > lo) lo = q;
            if (lo >= k) {
                e = tt_find(s, ka, kb, 1); if (!e) return 0;
                e->lo = lo; e->hi = hi;
                return 1;
            }
        } else if (r - q < hi) {
            hi = r - q;
            if (hi < k) {
                e = tt_find(s, ka, kb, 1); if (!e) return 0;
                e->lo = lo; e->hi = hi;
                return 0;
            }
        }
    }
    int laid[4];
    int result = play(s, plan, 0, laid, u, k, 1, ka, kb);
    if (s->error) return 0;
    if (result) lo = k; else hi = k - 1;
    e = tt_find(s, ka, kb, 1); if (!e) return 0;
    e->lo = lo; e->hi = hi;
    return result;
}

/* a stable sort of moves by keys (at most 10 cards: insertion sort keeps ties in order) */
static void sort_by(int *moves, int *keys, int n) {
    for (int a = 1; a < n; a++) {
        int m = moves[a], key = keys[a], b = a - 1;
        while (b >= 0 && keys[b] > key) { moves[b + 1] = moves[b]; keys[b + 1] = keys[b]; b--; }
        moves[b + 1] = m; keys[b + 1] = key;
    }
}

static void to_front(int *moves, int n, int card) {
    for (int a = 0; a < n; a++) {
        if (moves[a] == card) {
            for (int b = a; b > 0; b--) moves[b] = moves[b - 1];
            moves[0] = card;
            return;
        }
    }
}

static void reverse(int *m, int n) {
    for (int a = 0, b = n - 1; a < b; a++, b--) { int x = m[a]; m[a] = m[b]; m[b] = x; }
}

static void order_moves(Search *s, int *moves, int n, int z, const int *laid, const Plan *p, int i,
                        TTEntry *entry) {
    int keys[32];
    int d = s->duck_seat;
    if (i == 0) {
        if (s->wants[z]) {
            for (int a = 0; a < n; a++) keys[a] = -(moves[a] & 7);
            sort_by(moves, keys, n);
        } else if (s->zone_max[z] && d >= 0) {
            uint32_t dh = s->hands[d];
            for (int a = 0; a < n; a++) keys[a] = (!(dh >> (moves[a] & ~7) & 255)) * 16 + (moves[a] & 7);
            sort_by(moves, keys, n);
        } else if (d == z) {
            uint32_t o1 = s->hands[(z + 1) % 3], o2 = s->hands[(z + 2) % 3];
            for (int a = 0; a < n; a++) {
                int c = moves[a], sh = c & ~7;
                uint32_t above = (255u << ((c & 7) + 1)) & 255;
                uint32_t a1 = o1 >> sh & 255, a2 = o2 >> sh & 255;
                int cover;
                if ((a1 && !(a1 & ~above)) || (a2 && !(a2 & ~above))) cover = 0;
                else cover = ((a1 | a2) & above) ? 1 : 2;
                keys[a] = cover * 16 + (c & 7);
            }
            sort_by(moves, keys, n);
        } else {
            for (int a = 0; a < n; a++) keys[a] = moves[a] & 7;
            sort_by(moves, keys, n);
        }
        if (entry && entry->best >= 0) to_front(moves, n, entry->best);
        return;
    }
    int top = laid[0], top_zone = p->order[0];
    for (int j = 1; j < i; j++) {
        int c = laid[j];
        if (((c >> 3) == (top >> 3) && c > top) || ((c >> 3) == s->trump && (top >> 3) != s->trump)) {
            top = c; top_zone = p->order[j];
        }
    }
    int top_suit = top >> 3;
    int ruffable = top_suit != s->trump;
    int winners[32], losers[32], nw = 0, nl = 0;
    for (int a = 0; a < n; a++) {
        int c = moves[a];
        if (((c >> 3) == top_suit && c > top) || (ruffable && (c >> 3) == s->trump)) winners[nw++] = c;
        else losers[nl++] = c;
    }
    int in_rest = 0;
    for (int j = i + 1; j < p->n; j++) if (p->order[j] == d) in_rest = 1;
    if (s->wants[z]) {
        if (!(i == p->n - 1 && top_zone != PRIKUP_ZONE && s->zone_counted[top_zone] == s->zone_counted[z])) {
            memcpy(moves, winners, nw * sizeof(int));
            memcpy(moves + nw, losers, nl * sizeof(int));
        }
    } else if (s->zone_max[z] && d >= 0 && in_rest) {
        if ((moves[0] >> 3) != (moves[n - 1] >> 3)) {
            for (int a = 0; a < n; a++) keys[a] = moves[a] & 7;
            sort_by(moves, keys, n);
        }
    } else {
        if (nl && (losers[0] >> 3) != (losers[nl - 1] >> 3)) {
            for (int a = 0; a < nl; a++) keys[a] = losers[a] & 7;
            sort_by(losers, keys, nl);
        }
        reverse(losers, nl);
        reverse(winners, nw);
        memcpy(moves, losers, nl * sizeof(int));
        memcpy(moves + nl, winners, nw * sizeof(int));
    }
    Killer *kl = km_find(s, laid_key(laid, i), 0);
    if (kl) to_front(moves, n, kl->card);
}

static int play(Search *s, int plan, int i, int *laid, uint32_t present, int k, int has_key, uint64_t ka, uint64_t kb) {
    Plan *p = &s->plans[plan];
    int t = p->trick;
    int z = p->order[i];
    if (z == PRIKUP_ZONE) {
        laid[i] = s->prikup[t];
        return play(s, plan, i + 1, laid, present, k, 0, 0, 0);
    }
    s->nodes++;
    uint32_t h = s->hands[z];
    int moves[32], n = 0;
    uint8_t suits;
    if (i > 0) {
        int led = laid[0] >> 3;
        int held = ((h & 0xFF) != 0) | ((h & 0xFF00) != 0) << 1 | ((h & 0xFF0000) != 0) << 2
                   | ((h & 0xFF000000u) != 0) << 3;
        suits = s->allowed[led][held];
    } else {
        suits = 15;
    }
    for (int su = 0; su < 4; su++) {
        if (!(suits >> su & 1)) continue;
        int sh = su << 3;
        uint32_t hs = h >> sh & 255, us = present >> sh & 255;
        for (int b = 0; b < 8; b++) {
            if (!(hs >> b & 1)) continue;
            /* the lowest of a run: the next lower card left is not this hand's */
            uint32_t lower = us & ((1u << b) - 1);
            if (!lower || !(hs >> (31 - __builtin_clz(lower)) & 1)) moves[n++] = sh | b;
        }
    }
    TTEntry *entry = NULL;
    if (n > 1) {
        if (i == 0 && has_key) entry = tt_find(s, ka, kb, 0);
        order_moves(s, moves, n, z, laid, p, i, entry);
    }
    int mx = s->zone_max[z];
    int last = i == p->n - 1;
    for (int a = 0; a < n; a++) {
        int c = moves[a];
        s->hands[z] = h ^ (1u << c);
        laid[i] = c;
        int result;
        if (last) {
            int won;
            int next = resolve(s, plan, laid, p->n, &won);
            if (next < 0) { s->hands[z] = h; return 0; }
            result = boundary(s, next, k - won);
        } else {
            result = play(s, plan, i + 1, laid, present, k, 0, 0, 0);
        }
        if (s->error) { s->hands[z] = h; return 0; }
        if (result == mx) {
            s->hands[z] = h;
            if (a > 0) {
                if (i == 0) {
                    if (has_key) {
                        TTEntry *e = tt_find(s, ka, kb, 1);
                        if (!e) return 0;
                        /* the lead that decided it; boundary() writes the bounds at once */
                        e->best = (int8_t)c;
                    }
                } else {
                    Killer *kl = km_find(s, laid_key(laid, i), 1);
                    if (!kl) return 0;
                    kl->card = c;
                }
            }
            return mx;
        }
    }
    s->hands[z] = h;
    return !mx;
}

/* --- the Python type -------------------------------------------------------------- */

static int read_ints(PyObject *seq, uint32_t *out, int n) {
    PyObject *fast = PySequence_Fast(seq, "a sequence");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast); PyErr_SetString(PyExc_ValueError, "wrong length"); return -1;
    }
    for (int i = 0; i < n; i++) out[i] = (uint32_t)PyLong_AsUnsignedLongMask(PySequence_Fast_GET_ITEM(fast, i));
    Py_DECREF(fast);
    return PyErr_Occurred() ? -1 : 0;
}

static int Search_init(Search *s, PyObject *args, PyObject *kw) {
    PyObject *zone_max, *zone_counted, *wants, *allowed, *pending, *after, *prikup, *winner_cb, *follow_cb;
    int trump, quick_side, duck_seat;
    if (!PyArg_ParseTuple(args, "OOOiOOOOiiOO", &zone_max, &zone_counted, &wants, &trump, &allowed, &pending, &after,
                          &prikup, &quick_side, &duck_seat, &winner_cb, &follow_cb))
        return -1;
    uint32_t v[16];
    if (read_ints(zone_max, v, 3) < 0) return -1;
    for (int i = 0; i < 3; i++) s->zone_max[i] = v[i] != 0;
    if (read_ints(zone_counted, v, 3) < 0) return -1;
    for (int i = 0; i < 3; i++) s->zone_counted[i] = v[i] != 0;
    if (read_ints(wants, v, 3) < 0) return -1;
    for (int i = 0; i < 3; i++) s->wants[i] = v[i] != 0;
    s->trump = trump;
    PyObject *rows = PySequence_Fast(allowed, "allowed");
    if (!rows) return -1;
    if (PySequence_Fast_GET_SIZE(rows) != 4) { Py_DECREF(rows); PyErr_SetString(PyExc_ValueError, "allowed"); return -1; }
    for (int led = 0; led < 4; led++) {
        if (read_ints(PySequence_Fast_GET_ITEM(rows, led), v, 16) < 0) { Py_DECREF(rows); return -1; }
        for (int held = 0; held < 16; held++) s->allowed[led][held] = (uint8_t)v[held];
    }
    Py_DECREF(rows);
    if (read_ints(pending, s->pending, 12) < 0 || read_ints(after, s->after, 12) < 0) return -1;
    PyObject *pk = PySequence_Fast(prikup, "prikup");
    if (!pk) return -1;
    s->nprikup = (int)PySequence_Fast_GET_SIZE(pk);
    if (s->nprikup > 12) { Py_DECREF(pk); PyErr_SetString(PyExc_ValueError, "prikup"); return -1; }
    for (int i = 0; i < s->nprikup; i++) s->prikup[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(pk, i));
    Py_DECREF(pk);
    if (PyErr_Occurred()) return -1;
    s->quick_side = quick_side;
    s->duck_seat = duck_seat;
    Py_INCREF(winner_cb);
    Py_XSETREF(s->winner, winner_cb);
    Py_INCREF(follow_cb);
    Py_XSETREF(s->follow, follow_cb);
    return 0;
}

/* the rules' callbacks are methods of the Python solver that holds this search: a cycle
 * the garbage collector must see */
static int Search_traverse(Search *s, visitproc visit, void *arg) {
    Py_VISIT(s->winner);
    Py_VISIT(s->follow);
    return 0;
}

static int Search_clear(Search *s) {
    Py_CLEAR(s->winner);
    Py_CLEAR(s->follow);
    return 0;
}

static void Search_dealloc(Search *s) {
    PyObject_GC_UnTrack(s);
    Search_clear(s);
    free(s->tt); free(s->tm); free(s->km);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

/* search(hands, plan, trick, order, laid, k): does the counted side reach k? */
static PyObject *Search_search(Search *s, PyObject *args) {
    PyObject *hands, *trick, *order, *laid_seq;
    int plan, k;
    if (!PyArg_ParseTuple(args, "OiOOOi", &hands, &plan, &trick, &order, &laid_seq, &k)) return NULL;
    if (!s->winner || !s->follow) { PyErr_SetString(PyExc_RuntimeError, "a search without its rules"); return NULL; }
    if (read_ints(hands, s->hands, 3) < 0 || set_plan(s, plan, trick, order) < 0) return NULL;
    PyObject *fast = PySequence_Fast(laid_seq, "laid");
    if (!fast) return NULL;
    int n = (int)PySequence_Fast_GET_SIZE(fast);
    int laid[4];
    if (n >= s->plans[plan].n) {
        Py_DECREF(fast); PyErr_SetString(PyExc_ValueError, "laid"); return NULL;
    }
    for (int i = 0; i < n; i++) laid[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
    Py_DECREF(fast);
    if (PyErr_Occurred()) return NULL;
    s->error = 0;
    int result;
    if (n == 0) {
        result = boundary(s, plan, k);
    } else {
        int t = s->plans[plan].trick;
        uint32_t present = s->hands[0] | s->hands[1] | s->hands[2] | (t < 12 ? s->after[t] : 0);
        for (int i = 0; i < n; i++) present |= 1u << laid[i];
        result = play(s, plan, n, laid, present, k, 0, 0, 0);
    }
    if (s->error) return NULL;
    return PyBool_FromLong(result);
}

static PyObject *Search_nodes(Search *s, void *closure) {
    return PyLong_FromLongLong(s->nodes);
}

static PyObject *Search_entries(Search *s, void *closure) {
    return PyLong_FromSize_t(s->tt_used);
}

static PyMethodDef Search_methods[] = {
    {"search", (PyCFunction)Search_search, METH_VARARGS,
     "search(hands, plan, trick, order, laid, k): whether the counted side reaches k tricks"},
    {NULL}
};

static PyGetSetDef Search_getset[] = {
    {"nodes", (getter)Search_nodes, NULL, "cards tried so far", NULL},
    {"entries", (getter)Search_entries, NULL, "positions in the transposition table", NULL},
    {NULL}
};

static PyTypeObject SearchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "controller.core._dd.Search",
    .tp_basicsize = sizeof(Search),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)Search_traverse,
    .tp_clear = (inquiry)Search_clear,
    .tp_doc = "The compiled double-dummy search of one solver (see double_dummy.py).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Search_init,
    .tp_dealloc = (destructor)Search_dealloc,
    .tp_methods = Search_methods,
    .tp_getset = Search_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dd", "The compiled double-dummy search.", -1, NULL};

PyMODINIT_FUNC PyInit__dd(void) {
    for (int u = 0; u < 256; u++) {
        for (int h = 0; h < 256; h++) {
            if (h & ~u) continue;
            int packed = 0, i = 0;
            for (int b = 0; b < 8; b++) {
                if (!(u >> b & 1)) continue;
                if (h >> b & 1) packed |= 1 << i;
                i++;
            }
            PEXT[u << 8 | h] = (uint8_t)packed;
        }
    }
    if (PyType_Ready(&SearchType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&SearchType);
    if (PyModule_AddObject(m, "Search", (PyObject *)&SearchType) < 0) {
        Py_DECREF(&SearchType); Py_DECREF(m); return NULL;
    }
    return m;
}
