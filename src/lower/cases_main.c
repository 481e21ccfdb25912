/* The program of a batch of lowered cases (a template: harrow puts the target's header,
   the prelude and the case functions before it, and fills the markers).

   Standard input holds every buffer of every trial, each at a 64-byte boundary; each
   case's runner calls its function once per trial on its buffers and parameters and
   writes the output lanes to standard output, in order. One small runner per case keeps
   every function small: a `main` with thousands of calls takes clang minutes (and crashes
   its Hexagon backend). */
#include <stdio.h>
#include <stdlib.h>

static unsigned char out[1 << 16] __attribute__((aligned(128)));

@RUNNERS@
int main(void) {
  size_t cap = 1 << 20, len = 0;
  unsigned char *in = malloc(cap);
  for (size_t r; (r = fread(in + len, 1, cap - len, stdin)) > 0;) {
    len += r;
    if (len == cap) in = realloc(in, cap *= 2);
  }
@CALLS@
  return 0;
}
