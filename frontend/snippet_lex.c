/* SPDX-License-Identifier: Apache-2.0 */
/* snippet_lex.c: the tokenizer of kernel snippets, and located error messages.
 *
 * Approach (chibicc's tokenize.c): one pass over the NUL-terminated source producing an array of
 * tokens (identifiers, punctuators, numbers) that point into the source, each with its line and
 * column. Keywords are identifiers; the parser compares spellings. Numbers are converted here with
 * C++'s literal typing: a decimal literal is int, long long (and never unsigned unless suffixed),
 * a hex/octal one is int, unsigned int, long long, unsigned long long, whichever holds it first;
 * suffixes u, l, ll combine; a floating literal is double, or float with f. Comments are skipped;
 * preprocessor lines, strings and unknown characters are errors.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/snippet.h"

LoomStatus fe_error_at(Diag *d, LoomStatus status, const FeSource *src, int32_t line, int32_t col,
                       const char *fmt, ...) {
  if (!d || d->status != LOOM_OK) return d ? d->status : status;
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* find the line */
  const char *p = src && src->text ? src->text : "";
  for (int32_t l = 1; l < line && *p; p++)
    if (*p == '\n') l++;
  const char *end = p;
  while (*end && *end != '\n') end++;
  size_t len = (size_t)(end - p);
  size_t c = col > 0 ? (size_t)col - 1 : 0;
  if (c > len) c = len;
  /* show at most 120 characters around the column */
  size_t from = c > 80 ? c - 60 : 0;
  size_t shown = len - from > 120 ? 120 : len - from;
  char text[128], caret[128];
  memcpy(text, p + from, shown);
  text[shown] = 0;
  size_t k = 0;
  for (; k < c - from && k < sizeof caret - 2; k++) caret[k] = p[from + k] == '\t' ? '\t' : ' ';
  caret[k++] = '^';
  caret[k] = 0;
  const char *kernel = src && src->kernel ? src->kernel : "kernel";
  if (src && src->part)
    return diag_error(d, status, "%s(%s):%d:%d: error: %s\n%s%s\n%s%s", kernel, src->part, (int)line,
                      (int)col, what, from ? "..." : "", text, from ? "   " : "", caret);
  return diag_error(d, status, "%s:%d:%d: error: %s\n%s%s\n%s%s", kernel, (int)line, (int)col, what,
                    from ? "..." : "", text, from ? "   " : "", caret);
}

bool fe_tok_is(const FeToken *t, const char *s) {
  size_t n = strlen(s);
  return t->kind != FT_EOF && (size_t)t->len == n && memcmp(t->loc, s, n) == 0;
}

static bool is_ident1(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident2(char c) { return is_ident1(c) || is_digit(c); }

static const char *const puncts[] = {"<<=", ">>=", "...", "==", "!=", "<=", ">=", "&&", "||", "++",
                                     "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<",
                                     ">>", "->", "::"};

typedef struct Lexer {
  const FeSource *src;
  Diag *d;
  int32_t line;
  const char *line_start;
} Lexer;

#define LEX_ERR(p, ...) \
  fe_error_at(lx->d, LOOM_ERR_INVALID_ARGUMENT, lx->src, lx->line, (int32_t)((p) - lx->line_start) + 1, __VA_ARGS__)

static int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

/* Reads a number token starting at p into t. */
static LoomStatus lex_number(Lexer *lx, const char *p, FeToken *t) {
  const char *q = p;
  for (;;) { /* a pp-number */
    if ((q[0] == 'e' || q[0] == 'E' || q[0] == 'p' || q[0] == 'P') && (q[1] == '+' || q[1] == '-')) q += 2;
    else if (is_ident2(*q) || *q == '.') q++;
    else break;
  }
  t->len = (int32_t)(q - p);
  bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
  bool is_float = false;
  for (const char *r = p; r < q; r++)
    if (*r == '.' || (!hex && (*r == 'e' || *r == 'E')) || (hex && (*r == 'p' || *r == 'P'))) is_float = true;
  if (is_float) {
    char buf[80];
    if (t->len >= (int32_t)sizeof buf) return LEX_ERR(p, "number too long");
    memcpy(buf, p, (size_t)t->len);
    buf[t->len] = 0;
    char *endp = NULL;
    errno = 0;
    double v = strtod(buf, &endp);
    const char *suf = endp;
    LoomDType dt = LOOM_FLOAT64;
    if ((suf[0] == 'f' || suf[0] == 'F') && suf[1] == 0) {
      dt = LOOM_FLOAT32;
      v = (double)(float)v;
    } else if ((suf[0] == 'l' || suf[0] == 'L') && suf[1] == 0) {
      return LEX_ERR(p, "long double literals are not supported; drop the 'L' suffix");
    } else if (suf[0] != 0 || endp == buf) {
      return LEX_ERR(p, "invalid floating-point literal '%s'", buf);
    }
    t->dtype = (uint8_t)dt;
    t->value.f = v;
    return LOOM_OK;
  }
  int base = 10;
  const char *r = p;
  if (hex) {
    base = 16;
    r += 2;
  } else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
    base = 2;
    r += 2;
  } else if (p[0] == '0') {
    base = 8;
  }
  const char *digits = r;
  uint64_t v = 0;
  bool overflow = false;
  while (r < q && digit_value(*r) < base) {
    unsigned dv = (unsigned)digit_value(*r);
    if (v > (UINT64_MAX - dv) / (uint64_t)base) overflow = true;
    v = v * (uint64_t)base + dv;
    r++;
  }
  if (r == digits && base != 8) return LEX_ERR(p, "invalid integer literal '%.*s'", t->len, p);
  bool u = false;
  int l = 0;
  while (r < q) {
    if ((*r == 'u' || *r == 'U') && !u) {
      u = true;
      r++;
    } else if ((*r == 'l' || *r == 'L') && l == 0) {
      l = 1;
      r++;
      if (r < q && *r == r[-1]) {
        l = 2;
        r++;
      }
    } else {
      if (is_digit(*r)) return LEX_ERR(r, "invalid digit '%c' in %s literal", *r, base == 8 ? "octal" : "binary");
      return LEX_ERR(p, "invalid suffix '%.*s' on integer literal", (int)(q - r), r);
    }
  }
  if (overflow) return LEX_ERR(p, "integer literal '%.*s' is too large", t->len, p);
  /* C++ literal typing (long = long long = 64 bits, as on Linux) */
  LoomDType dt;
  bool any_base = base != 10;
  if (u) dt = (l == 0 && v <= UINT32_MAX) ? LOOM_UINT32 : LOOM_UINT64;
  else if (l == 0 && v <= INT32_MAX) dt = LOOM_INT32;
  else if (l == 0 && any_base && v <= UINT32_MAX) dt = LOOM_UINT32;
  else if (v <= INT64_MAX) dt = LOOM_INT64;
  else if (any_base) dt = LOOM_UINT64;
  else return LEX_ERR(p, "integer literal '%.*s' is too large for long long; add a 'u' suffix", t->len, p);
  t->dtype = (uint8_t)dt;
  t->value.u = v;
  return LOOM_OK;
}

static int read_escape(const char **pp) {
  const char *p = *pp;
  int c;
  switch (*p) {
  case 'n': c = '\n'; break;
  case 't': c = '\t'; break;
  case 'r': c = '\r'; break;
  case '0': c = 0; break;
  case '\\': c = '\\'; break;
  case '\'': c = '\''; break;
  case '"': c = '"'; break;
  case 'a': c = 7; break;
  case 'b': c = 8; break;
  case 'f': c = 12; break;
  case 'v': c = 11; break;
  default: return -1;
  }
  *pp = p + 1;
  return c;
}

LoomStatus fe_tokenize(Arena *a, const FeSource *src, FeToken **out, int32_t *ntok, Diag *d) {
  Lexer lxv = {src, d, 1, src->text}, *lx = &lxv;
  const char *p = src->text;
  size_t srclen = strnlen(p, (size_t)FE_MAX_SOURCE + 1);
  if (srclen > (size_t)FE_MAX_SOURCE)
    return fe_error_at(d, LOOM_ERR_INVALID_ARGUMENT, src, 1, 1, "snippet longer than %d bytes", FE_MAX_SOURCE);
  /* at most one token per source byte, plus EOF */
  int32_t cap = 64, n = 0;
  FeToken *toks = arena_alloc(a, (size_t)cap * sizeof *toks);
  if (!toks) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory tokenizing a snippet");
  bool line_begin = true;
  for (;;) {
    if (n + 1 >= cap) {
      FeToken *nt = arena_alloc(a, (size_t)cap * 2 * sizeof *toks);
      if (!nt) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory tokenizing a snippet");
      memcpy(nt, toks, (size_t)n * sizeof *toks);
      toks = nt;
      cap *= 2;
    }
    char c = *p;
    if (c == '\n') {
      p++;
      lx->line++;
      lx->line_start = p;
      line_begin = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      p++;
      continue;
    }
    if (c == '/' && p[1] == '/') {
      while (*p && *p != '\n') p++;
      continue;
    }
    if (c == '/' && p[1] == '*') {
      const char *start = p;
      int32_t sline = lx->line;
      const char *sls = lx->line_start;
      p += 2;
      while (*p && !(p[0] == '*' && p[1] == '/')) {
        if (*p == '\n') {
          lx->line++;
          lx->line_start = p + 1;
        }
        p++;
      }
      if (!*p) {
        lx->line = sline;
        lx->line_start = sls;
        return LEX_ERR(start, "unterminated comment");
      }
      p += 2;
      continue;
    }
    FeToken *t = &toks[n];
    memset(t, 0, sizeof *t);
    t->loc = p;
    t->line = lx->line;
    t->col = (int32_t)(p - lx->line_start) + 1;
    if (c == 0) {
      t->kind = FT_EOF;
      n++;
      break;
    }
    if (c == '#' && line_begin)
      return LEX_ERR(p, "preprocessor directives are not supported in snippets (use constants or helper functions)");
    line_begin = false;
    if (is_digit(c) || (c == '.' && is_digit(p[1]))) {
      t->kind = FT_NUM;
      LoomStatus st = lex_number(lx, p, t);
      if (st) return st;
      p += t->len;
      n++;
      continue;
    }
    if (is_ident1(c)) {
      const char *q = p;
      while (is_ident2(*q)) q++;
      t->kind = FT_IDENT;
      t->len = (int32_t)(q - p);
      p = q;
      n++;
      continue;
    }
    if (c == '\'') {
      const char *q = p + 1;
      int v;
      if (*q == '\\') {
        q++;
        v = read_escape(&q);
        if (v < 0) return LEX_ERR(q, "unsupported escape sequence in character literal");
      } else if (*q && *q != '\'' && *q != '\n') {
        v = (unsigned char)*q++;
      } else {
        return LEX_ERR(p, "empty or unterminated character literal");
      }
      if (*q != '\'') return LEX_ERR(p, "unterminated character literal (one character expected)");
      q++;
      t->kind = FT_NUM;
      t->dtype = LOOM_INT8; /* C++: char */
      t->value = ir_scalar_canon(LOOM_INT8, (Scalar){.i = (int8_t)v});
      t->len = (int32_t)(q - p);
      p = q;
      n++;
      continue;
    }
    if (c == '"') return LEX_ERR(p, "string literals are not supported in snippets");
    bool found = false;
    for (size_t k = 0; k < sizeof puncts / sizeof *puncts; k++) {
      size_t l = strlen(puncts[k]);
      if (strncmp(p, puncts[k], l) == 0) {
        t->kind = FT_PUNCT;
        t->len = (int32_t)l;
        found = true;
        break;
      }
    }
    if (!found && strchr("+-*/%&|^~!=<>?:;,.()[]{}", c)) {
      t->kind = FT_PUNCT;
      t->len = 1;
      found = true;
    }
    if (!found) {
      if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f) return LEX_ERR(p, "unexpected character '%c'", c);
      return LEX_ERR(p, "unexpected byte 0x%02x", (unsigned char)c);
    }
    p += t->len;
    n++;
  }
  *out = toks;
  *ntok = n;
  return LOOM_OK;
}
