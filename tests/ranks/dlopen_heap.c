/*
 * tests/ranks/dlopen_heap.c — an unmodified program (not linked with libhint) that loads it with
 * dlopen: its malloc is the shared heap's only when hintrun --shared-heap preloaded libhint.
 *   dlopen_heap LIBHINT expect   (expect: 1 = buffers must be on the shared heap, 0 = not)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    int (*init)(int *, char ***) = (int (*)(int *, char ***))dlsym(h, "hint_init");
    int (*fini)(void) = (int (*)(void))dlsym(h, "hint_finalize");
    int (*shared)(const void *) = (int (*)(const void *))dlsym(h, "hint_mem_shared");
    if (!init || !fini || !shared || init(&argc, &argv) != 0)
        return 1;
    void *p = malloc(1000);
    int on = shared(p);
    free(p);
    fini();
    int want = atoi(argv[2]);
    printf("buffer on the shared heap: %d (expected %d)\n", on, want);
    return on == want ? 0 : 1;
}
