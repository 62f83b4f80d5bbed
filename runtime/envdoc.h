/*
 * runtime/envdoc.h — every HINT_* environment variable hint reads, with its default and
 * meaning: one table that hint_info prints and the README mirrors.
 */
#ifndef HINT_RUNTIME_ENVDOC_H
#define HINT_RUNTIME_ENVDOC_H

struct rt_env_doc {
    const char *name;
    const char *dflt;
    const char *meaning;
};

extern const struct rt_env_doc rt_env_docs[];
extern const int rt_env_ndocs;

#endif
