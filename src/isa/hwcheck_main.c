/* The hardware check program (a template: harrow puts the target's header before it and
   fills the markers with one test function per instruction and their calls).

   The operands come on standard input (compiled in, tens of megabytes of initializer take
   clang minutes): DATA_BYTES bytes, read whole before the tests run. Each test calls its
   instruction on operand sets read from DATA and prints every result as `tag hexbytes`. */
#include <stdio.h>
#include <stdlib.h>

#define DATA_BYTES @DATA_BYTES@

static void dump(const char *tag, const void *p, int n) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *b = (const unsigned char *)p;
  char line[1024];
  for (int i = 0; i < n; i++) { line[2 * i] = hex[b[i] >> 4]; line[2 * i + 1] = hex[b[i] & 15]; }
  line[2 * n] = 0;
  printf("%s %s\n", tag, line);
}

static const unsigned char *DATA;

static void read_data(void) {
  size_t n = DATA_BYTES;
  unsigned char *d = malloc(n), *p = d;
  while (n) { size_t r = fread(p, 1, n, stdin); if (!r) exit(3); p += r; n -= r; }
  DATA = d;
}

@TESTS@
int main(void) {
  read_data();
@CALLS@
  return 0;
}
