/* hint.h compiles alone, first, with -std=c11 -Wall -Wextra -Werror -pedantic (see meson.build). */
#include <hint.h>
int main(void) { return hint_strerror(HINT_SUCCESS) == 0; }
