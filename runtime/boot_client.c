/* runtime/boot_client.c — placeholder: singleton only, until the store client lands. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hint.h"
#include "runtime/boot.h"

int boot_init(struct boot_info *info)
{
    *info = (struct boot_info){.rank = 0, .size = 1, .local_rank = 0, .local_size = 1,
                               .node_id = 0, .nnodes = 1, .singleton = 1};
    snprintf(info->jobid, sizeof info->jobid, "%016lx", (unsigned long)getpid());
    return HINT_SUCCESS;
}
int boot_put(const char *key, const void *val, size_t len) { (void)key; (void)val; (void)len; return HINT_SUCCESS; }
int boot_get(const char *key, void *val, size_t cap, size_t *len) { (void)key; (void)val; (void)cap; (void)len; return HINT_ERR_BOOTSTRAP; }
int boot_fence(void) { return HINT_SUCCESS; }
void boot_abort(int code, const char *msg) { if (msg) fprintf(stderr, "%s\n", msg); _exit(code); }
void boot_fini(void) {}
