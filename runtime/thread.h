/*
 * runtime/thread.h — the thread that started hint (hint_is_thread_main) and the thread level
 * hint provides (hint_init_thread, hint_query_thread).
 */
#ifndef HINT_RUNTIME_THREAD_H
#define HINT_RUNTIME_THREAD_H

/* hint_init calls it: the calling thread becomes the main thread. */
void rt_thread_note_main(void);

/* A helper thread of the runtime (the heap's keeper, the network watcher) takes a file table of
   its own, keeping only the descriptors it uses (keep_a, keep_b; -1 for none). */
void rt_thread_own_files(int keep_a, int keep_b);

#endif
