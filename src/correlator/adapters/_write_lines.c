/* The block-write lines of a block, found and read at memchr speed: the native twin of
 * correlator.core.ingest.write_lines.StdlibWriteReader (``WriteReader``'s docstrings are the contract; property tests
 * hold the two equal). No I/O, no state: bytes in, lists out.
 *
 * A busy DataNode's log is mostly these lines: they are found and read here without a callback or a regex pass per
 * line (``correlator bench parse`` prints both readers' rates).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static const char OPEN_PHRASE[] = "Receiving BP-";
static const char CLOSE_PHRASE[] = "op: HDFS_WRITE";
/* A byte of each phrase that is uncommon in a DataNode's log ('B' of "BP-": about once a line, in the block pool id;
 * 'W' of "WRITE": about once per write): memchr for it, then compare the phrase around it. memmem starts from the
 * phrases' first bytes, which are common in such a log, and so stops far more often. */
static const size_t OPEN_ANCHOR = 10, CLOSE_ANCHOR = 9;

static const char *find(const char *p, const char *end, const char *phrase, size_t size, size_t anchor) {
    if ((size_t)(end - p) < size) return NULL;
    const char *q = p + anchor;
    while (q < end && (q = memchr(q, phrase[anchor], (size_t)(end - q))) != NULL) {
        const char *at = q - anchor;
        if ((size_t)(end - at) >= size && memcmp(at, phrase, size) == 0) return at;
        q++;
    }
    return NULL;
}

/* ``[^:\n ]*+``: a pool or host token. */
static const char *skip_token(const char *p, const char *end) {
    while (p < end && *p != ':' && *p != '\n' && *p != ' ') p++;
    return p;
}

/* ``[^,\n]*+``: a clienttrace field's value. */
static const char *skip_field(const char *p, const char *end) {
    while (p < end && *p != ',' && *p != '\n') p++;
    return p;
}

static const char *digits(const char *p, const char *end) {
    while (p < end && *p >= '0' && *p <= '9') p++;
    return p;
}

static const char *literal(const char *p, const char *end, const char *text) {
    size_t n = strlen(text);
    return ((size_t)(end - p) >= n && memcmp(p, text, n) == 0) ? p + n : NULL;
}

/* ``Receiving BP-[^:\n ]*+:(blk_\d++)_`` at ``p``: the end of the match, or NULL; the id's span in ``id``. */
static const char *read_open(const char *p, const char *end, const char **id, const char **id_end) {
    p = skip_token(p + sizeof(OPEN_PHRASE) - 1, end);
    if ((p = literal(p, end, ":blk_")) == NULL) return NULL;
    *id = p - 4;
    const char *q = digits(p, end);
    if (q == p || (p = literal(q, end, "_")) == NULL) return NULL;
    *id_end = q;
    return p;
}

/* ``op: HDFS_WRITE, cliID: [^,\n]*+, offset: [^,\n]*+, srvID: [^,\n]*+, blockid: [^:\n ]*+:(blk_\d++)_\d++,
 * duration(?:\(ns\))?+: (\d++)`` at ``p``: the end of the match, or NULL; the id's and duration's spans. */
static const char *read_close(const char *p, const char *end, const char **id, const char **id_end,
                              const char **took, const char **took_end) {
    static const char *const fields[] = {", cliID: ", ", offset: ", ", srvID: "};
    p += sizeof(CLOSE_PHRASE) - 1;
    for (int i = 0; i < 3; i++) {
        if ((p = literal(p, end, fields[i])) == NULL) return NULL;
        p = skip_field(p, end);
    }
    if ((p = literal(p, end, ", blockid: ")) == NULL) return NULL;
    p = skip_token(p, end);
    if ((p = literal(p, end, ":blk_")) == NULL) return NULL;
    *id = p - 4;
    const char *q = digits(p, end);
    if (q == p) return NULL;
    *id_end = q;
    if ((p = literal(q, end, "_")) == NULL) return NULL;
    q = digits(p, end);
    if (q == p || (p = literal(q, end, ", duration")) == NULL) return NULL;
    const char *ns = literal(p, end, "(ns)");
    if ((p = literal(ns ? ns : p, end, ": ")) == NULL) return NULL;
    q = digits(p, end);
    if (q == p) return NULL;
    *took = p;
    *took_end = q;
    return q;
}

static int append_steal(PyObject *list, PyObject *item) {
    if (item == NULL) return -1;
    int failed = PyList_Append(list, item);
    Py_DECREF(item);
    return failed;
}

static int append_span(PyObject *list, const char *from, const char *to) {
    if (from == NULL) {
        return PyList_Append(list, Py_None);
    }
    return append_steal(list, PyBytes_FromStringAndSize(from, to - from));
}

/* Every occurrence of one phrase, in order; the pattern is tried at each one that does not lie inside the match
 * before it (``re.findall``'s non-overlapping rule). ``close``: which pattern. */
static int find_phrase(const char *data, Py_ssize_t n, int close, PyObject *at, PyObject *ids, PyObject *took) {
    const char *phrase = close ? CLOSE_PHRASE : OPEN_PHRASE;
    size_t size = close ? sizeof(CLOSE_PHRASE) - 1 : sizeof(OPEN_PHRASE) - 1;
    size_t anchor = close ? CLOSE_ANCHOR : OPEN_ANCHOR;
    const char *end = data + n, *p = data, *matched_until = data;
    while ((p = find(p, end, phrase, size, anchor)) != NULL) {
        const char *id = NULL, *id_end = NULL, *d = NULL, *d_end = NULL, *stop = NULL;
        if (p >= matched_until) {
            stop = close ? read_close(p, end, &id, &id_end, &d, &d_end) : read_open(p, end, &id, &id_end);
        }
        if (stop == NULL) {
            id = NULL;
            d = NULL;
        } else {
            matched_until = stop;
        }
        if (append_steal(at, PyLong_FromSsize_t(p - data)) < 0 || append_span(ids, id, id_end) < 0) return -1;
        if (close && append_span(took, d, d_end) < 0) return -1;
        p += size;
    }
    return 0;
}

static PyObject *find_write_lines(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *opens = PyList_New(0), *open_ids = PyList_New(0);
    PyObject *closes = PyList_New(0), *close_ids = PyList_New(0), *durations = PyList_New(0);
    PyObject *result = NULL;
    if (opens && open_ids && closes && close_ids && durations) {
        if (find_phrase(view.buf, view.len, 0, opens, open_ids, NULL) == 0
            && find_phrase(view.buf, view.len, 1, closes, close_ids, durations) == 0) {
            result = PyTuple_Pack(5, opens, open_ids, closes, close_ids, durations);
        }
    }
    Py_XDECREF(opens);
    Py_XDECREF(open_ids);
    Py_XDECREF(closes);
    Py_XDECREF(close_ids);
    Py_XDECREF(durations);
    PyBuffer_Release(&view);
    return result;
}

/* Start of the line holding ``data[at]``. */
static const char *line_start(const char *data, Py_ssize_t at) {
#ifdef __GLIBC__
    const char *newline = at > 0 ? memrchr(data, '\n', (size_t)at) : NULL;  /* SIMD, backwards */
    return newline ? newline + 1 : data;
#else
    const char *line = data + at;
    while (line > data && line[-1] != '\n') line--;
    return line;
#endif
}

/* ``in_second`` of the stdlib reader: whether the line holding each of ``offsets`` begins with the same 19 bytes (a
 * stamp to the second) as the line at ``first``; false when that line is shorter than a stamp. */
static PyObject *in_second(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t first;
    PyObject *offsets;
    if (!PyArg_ParseTuple(args, "y*nO!", &view, &first, &PyList_Type, &offsets)) return NULL;
    const char *data = view.buf;
    const Py_ssize_t n = view.len, width = 19;
    int same = first >= 0 && first + width <= n && memchr(data + first, '\n', (size_t)width) == NULL;
    for (Py_ssize_t i = 0; same && i < PyList_GET_SIZE(offsets); i++) {
        Py_ssize_t at = PyLong_AsSsize_t(PyList_GET_ITEM(offsets, i));
        if (at == -1 && PyErr_Occurred()) {
            PyBuffer_Release(&view);
            return NULL;
        }
        if (at < 0 || at > n) {
            same = 0;
            break;
        }
        const char *line = line_start(data, at);
        same = data + n - line >= width && memcmp(line, data + first, (size_t)width) == 0;
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(same);
}

/* ``[ :](\d+)ms \(threshold=`` searched in ``[line, end)``: the first "ms (threshold=" preceded by digits and a space
 * or colon is the leftmost match (each match ends at its own phrase). Its digits' span, or 0 when none. */
static int slow_ms(const char *line, const char *end, const char **digits_at, const char **digits_end) {
    static const char phrase[] = "ms (threshold=";
    const size_t size = sizeof(phrase) - 1;
    const char *p = line;
    while ((size_t)(end - p) >= size && (p = memchr(p, 'm', (size_t)(end - p))) != NULL) {
        if ((size_t)(end - p) < size) break;
        if (memcmp(p, phrase, size) == 0) {
            const char *d = p;
            while (d > line && d[-1] >= '0' && d[-1] <= '9') d--;
            if (d < p && d > line && (d[-1] == ' ' || d[-1] == ':')) {
                *digits_at = d;
                *digits_end = p;
                return 1;
            }
        }
        p++;
    }
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* ``\d{4}-\d\d-\d\d[ T]\d\d:\d\d`` at ``p``. */
static int stamped(const char *p, const char *end) {
    static const char shape[] = "dddd-dd-dd?dd:dd";
    if (end - p < 16) return 0;
    for (int i = 0; i < 16; i++) {
        char s = shape[i], c = p[i];
        if (s == 'd' ? !is_digit(c) : s == '?' ? (c != ' ' && c != 'T') : c != s) return 0;
    }
    return 1;
}

#define MAX_HELD 8

/* ``burst_lines.burst_run``'s twin (its docstrings are the contract): the hits from ``first`` on whose lines extend
 * the held bursts, walked while every check passes. ``held``: a list of (last_ts_ms, start_ms, longest_ms, gap_ms,
 * timed) tuples. */
static PyObject *burst_run(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view, kinds, prefix;
    PyObject *hits, *held;
    Py_ssize_t first, step_at, decided_until, write_from;
    long long second_ms, max_span, until_ts;
    if (!PyArg_ParseTuple(args, "y*O!nO!y*y*LLLnnn", &view, &PyList_Type, &hits, &first, &PyTuple_Type, &held, &kinds,
                          &prefix, &second_ms, &max_span, &until_ts, &step_at, &decided_until, &write_from)) {
        return NULL;
    }
    long long last[MAX_HELD], start[MAX_HELD], longest[MAX_HELD], gap[MAX_HELD];
    int timed[MAX_HELD];
    Py_ssize_t counts[MAX_HELD] = {0};
    const Py_ssize_t slots = PyTuple_GET_SIZE(held);
    const char *problem = slots > MAX_HELD ? "too many held bursts" : NULL;
    for (Py_ssize_t j = 0; problem == NULL && j < slots; j++) {
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(held, j), "LLLLp", &last[j], &start[j], &longest[j], &gap[j],
                              &timed[j])) {
            problem = "";
        }
    }
    const char *data = view.buf, *end_of_data = data + view.len;
    const unsigned char *kind = kinds.buf;
    const Py_ssize_t n = view.len, count_hits = PyList_GET_SIZE(hits);
    Py_ssize_t i = first < 0 ? 0 : first, until = decided_until;
    for (; problem == NULL && i < count_hits; i++) {
        PyObject *pair = PyList_GET_ITEM(hits, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            problem = "hits must be (offset, index) pairs";
            break;
        }
        Py_ssize_t hit = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0));
        Py_ssize_t index = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 1));
        if ((hit == -1 || index == -1) && PyErr_Occurred()) {
            problem = "";
            break;
        }
        if (hit < until && index < write_from) continue;
        Py_ssize_t slot = index >= 0 && index < kinds.len ? (Py_ssize_t)kind[index] - 1 : -1;
        if (slot < 0 || slot >= slots || hit < 0 || hit > n) break;
        const char *line = line_start(data, hit);
        Py_ssize_t at = line - data;
        if (at > step_at || prefix.len != 19 || n - at < 23 || memcmp(line, prefix.buf, 19) != 0
            || (line[19] != ',' && line[19] != '.') || !is_digit(line[20]) || !is_digit(line[21])
            || !is_digit(line[22])) {
            break;
        }
        long long ts = second_ms + (line[20] - '0') * 100 + (line[21] - '0') * 10 + (line[22] - '0');
        const char *newline = memchr(data + hit, '\n', (size_t)(n - hit));
        const char *end = newline ? newline + 1 : end_of_data;
        if (end < end_of_data && !stamped(end, end_of_data)) break;
        long long duration = 0;
        if (timed[slot]) {
            const char *d, *d_end;
            if (!slow_ms(line, end, &d, &d_end) || d_end - d > 15) break;
            for (; d < d_end; d++) duration = duration * 10 + (*d - '0');
        }
        if (ts - last[slot] > gap[slot] || ts - start[slot] > max_span || ts > until_ts
            || (longest[slot] >= 0 && duration > longest[slot])) {
            break;
        }
        int passes_another = 0;
        for (Py_ssize_t j = 0; j < slots; j++) passes_another |= j != slot && ts - last[j] > gap[j];
        if (passes_another) break;
        counts[slot]++;
        if (ts > last[slot]) last[slot] = ts;
        if (ts - duration < start[slot]) start[slot] = ts - duration;
        until = end - data;
    }
    PyBuffer_Release(&view);
    PyBuffer_Release(&kinds);
    PyBuffer_Release(&prefix);
    if (problem != NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, problem);
        return NULL;
    }
    PyObject *extended = PyTuple_New(slots);
    if (extended == NULL) return NULL;
    for (Py_ssize_t j = 0; j < slots; j++) {
        PyObject *one = Py_BuildValue("(nLL)", counts[j], last[j], start[j]);
        if (one == NULL) {
            Py_DECREF(extended);
            return NULL;
        }
        PyTuple_SET_ITEM(extended, j, one);
    }
    return Py_BuildValue("(nnN)", i, until, extended);
}

/* ``_gap`` of the stdlib reader: ms from the stamp at ``o`` to the stamp at ``c`` when the 23 bytes at each have a
 * stamp's shape and share their first 16 (the minute); else -1 with ``*ok`` 0. */
static long long gap_ms(const char *data, Py_ssize_t n, Py_ssize_t o, Py_ssize_t c, int *ok) {
    *ok = 0;
    if (o + 23 > n || c + 23 > n || memcmp(data + o, data + c, 16) != 0) return -1;
    const Py_ssize_t at[2] = {o, c};
    long long ms[2];
    for (int k = 0; k < 2; k++) {
        const char *s = data + at[k];
        if (s[10] != ' ' || (s[19] != ',' && s[19] != '.')) return -1;
        if (!is_digit(s[17]) || !is_digit(s[18]) || !is_digit(s[20]) || !is_digit(s[21]) || !is_digit(s[22])) return -1;
        ms[k] = ((s[17] - '0') * 10 + (s[18] - '0')) * 1000LL + (s[20] - '0') * 100 + (s[21] - '0') * 10 + (s[22] - '0');
    }
    *ok = 1;
    return ms[1] - ms[0];
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f'; }

/* ``writes.bytes_at``: the ``bytes: N`` field of the line at ``c`` (0 when it has none or it is not digits). */
static PyObject *line_bytes(const char *data, Py_ssize_t n, Py_ssize_t c) {
    static const char field[] = "bytes: ";
    const size_t size = sizeof(field) - 1;
    const char *end = memchr(data + c, '\n', (size_t)(n - c));
    end = end ? end : data + n;
    const char *p = data + c, *at = NULL;
    while ((size_t)(end - p) >= size && (p = memchr(p, 'b', (size_t)(end - p))) != NULL) {
        if ((size_t)(end - p) >= size && memcmp(p, field, size) == 0) {
            at = p;
            break;
        }
        p++;
    }
    if (at == NULL) return PyLong_FromLong(0);
    const char *from = at + size, *to = memchr(from, ',', (size_t)(end - from));
    to = to ? to : end;
    while (from < to && is_space(*from)) from++;
    while (to > from && is_space(to[-1])) to--;
    if (from == to) return PyLong_FromLong(0);
    for (const char *q = from; q < to; q++)
        if (!is_digit(*q)) return PyLong_FromLong(0);
    char buffer[64];
    if (to - from < (Py_ssize_t)sizeof(buffer)) {
        memcpy(buffer, from, (size_t)(to - from));
        buffer[to - from] = '\0';
        return PyLong_FromString(buffer, NULL, 10);
    }
    PyObject *text = PyUnicode_FromStringAndSize(from, to - from);
    if (text == NULL) return NULL;
    PyObject *value = PyLong_FromUnicodeObject(text, 10);
    Py_DECREF(text);
    return value;
}

/* ``spans`` of the stdlib reader: per pair of offsets, the ms between their lines' stamps within one minute (None
 * otherwise) and the bytes the second line reports. */
static PyObject *spans(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    PyObject *opens, *closes;
    if (!PyArg_ParseTuple(args, "y*O!O!", &view, &PyList_Type, &opens, &PyList_Type, &closes)) return NULL;
    const char *data = view.buf;
    const Py_ssize_t n = view.len, count = PyList_GET_SIZE(opens);
    PyObject *gaps = NULL, *sizes = NULL, *result = NULL;
    if (PyList_GET_SIZE(closes) != count) {
        PyErr_SetString(PyExc_ValueError, "opens and closes differ in length");
        goto done;
    }
    if ((gaps = PyList_New(count)) == NULL || (sizes = PyList_New(count)) == NULL) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t o = PyLong_AsSsize_t(PyList_GET_ITEM(opens, i)), c = PyLong_AsSsize_t(PyList_GET_ITEM(closes, i));
        if ((o == -1 || c == -1) && PyErr_Occurred()) goto done;
        if (o < 0 || o > n || c < 0 || c > n) {
            PyErr_SetString(PyExc_IndexError, "offset outside the block");
            goto done;
        }
        o = line_start(data, o) - data;
        c = line_start(data, c) - data;
        int ok;
        long long gap = gap_ms(data, n, o, c, &ok);
        PyObject *g = ok ? PyLong_FromLongLong(gap) : Py_NewRef(Py_None), *b = line_bytes(data, n, c);
        if (g == NULL || b == NULL) {
            Py_XDECREF(g);
            Py_XDECREF(b);
            goto done;
        }
        PyList_SET_ITEM(gaps, i, g);
        PyList_SET_ITEM(sizes, i, b);
    }
    result = PyTuple_Pack(2, gaps, sizes);
done:
    Py_XDECREF(gaps);
    Py_XDECREF(sizes);
    PyBuffer_Release(&view);
    return result;
}

/* ``newlines`` of the stdlib reader: the newlines of ``block[start:end]`` (clamped as slicing clamps). Newlines
 * come every few hundred bytes: memchr from one to the next skips the bytes between them with wide loads. */
static PyObject *newlines(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &end)) return NULL;
    const Py_ssize_t n = view.len;
    start = start < 0 ? (start + n < 0 ? 0 : start + n) : (start > n ? n : start);
    end = end < 0 ? (end + n < 0 ? 0 : end + n) : (end > n ? n : end);
    Py_ssize_t count = 0;
    const char *p = (const char *)view.buf + start, *stop = (const char *)view.buf + end;
    while (p < stop && (p = memchr(p, '\n', (size_t)(stop - p))) != NULL) {
        count++;
        p++;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}

/* ``write_lines.wall_ms``: the 23 bytes at ``s`` as ms of wall time (days counted from 0001-01-01, as Python's
 * ``date.toordinal``), or -1 where they are not a ``yyyy-MM-dd HH:mm:ss,SSS`` stamp of a real minute. */
static long long wall_ms(const char *s) {
    static const char shape[] = "dddd-dd-dd dd:dd:dd?ddd";
    for (int k = 0; k < 23; k++) {
        const char c = s[k], want = shape[k];
        if (want == 'd' ? !is_digit(c) : want == '?' ? (c != ',' && c != '.') : c != want) return -1;
    }
#define NUM2(i) ((s[i] - '0') * 10 + (s[(i) + 1] - '0'))
    const long long y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + NUM2(2);
    const int mo = NUM2(5), d = NUM2(8), h = NUM2(11), mi = NUM2(14), sec = NUM2(17);
    const int milli = (s[20] - '0') * 100 + NUM2(21);
#undef NUM2
    static const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > month_days[mo - 1] + (mo == 2 && leap) || h > 23 || mi > 59) {
        return -1;
    }
    static const int before_month[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    const long long prior = y - 1;
    const long long days = prior * 365 + prior / 4 - prior / 100 + prior / 400 + before_month[mo - 1]
                           + (mo > 2 && leap) + d;
    return ((days * 24 + h) * 60 + mi) * 60000LL + sec * 1000LL + milli;
}

/* ``step_back`` of the stdlib reader: the index of the first of ``offsets`` whose line is stamped more than
 * ``back_ms`` before the newest line before it (lines without a stamp's shape are passed over), or -1. */
static PyObject *step_back(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    PyObject *offsets;
    long long back;
    if (!PyArg_ParseTuple(args, "y*O!L", &view, &PyList_Type, &offsets, &back)) return NULL;
    const char *data = view.buf;
    const Py_ssize_t n = view.len, count = PyList_GET_SIZE(offsets);
    Py_ssize_t found = -1;
    long long newest = 0;
    int seen = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        const Py_ssize_t at = PyLong_AsSsize_t(PyList_GET_ITEM(offsets, i));
        if (at == -1 && PyErr_Occurred()) {
            PyBuffer_Release(&view);
            return NULL;
        }
        if (at < 0 || at > n) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_IndexError, "offset outside the block");
            return NULL;
        }
        const char *line = line_start(data, at);
        if (data + n - line < 23) continue;
        const long long ts = wall_ms(line);
        if (ts < 0) continue;
        if (seen && ts < newest - back) {
            found = i;
            break;
        }
        if (!seen || ts > newest) newest = ts;
        seen = 1;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(found);
}

static PyMethodDef methods[] = {
    {"find_write_lines", find_write_lines, METH_O,
     "find_write_lines(block) -> (opens, open_ids, closes, close_ids, durations)"},
    {"in_second", in_second, METH_VARARGS,
     "in_second(block, first, offsets) -> whether each offset's line begins with the stamp of the line at first"},
    {"burst_run", burst_run, METH_VARARGS,
     "burst_run(block, hits, first, held, kinds, prefix, second_ms, max_span_ms, until_ts_ms, step_at, "
     "decided_until, write_from) -> (next_hit, decided_until, ((count, last_ts_ms, start_ms), ...))"},
    {"spans", spans, METH_VARARGS,
     "spans(block, opens, closes) -> (gaps, sizes): per pair, ms between its lines' stamps within a minute, or None; "
     "the second line's bytes"},
    {"newlines", newlines, METH_VARARGS, "newlines(block, start, end) -> the newlines of block[start:end]"},
    {"step_back", step_back, METH_VARARGS,
     "step_back(block, offsets, back_ms) -> index of the first offset whose line steps back further, or -1"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_write_lines", NULL, 0, methods};

PyMODINIT_FUNC PyInit__write_lines(void) { return PyModule_Create(&module); }
