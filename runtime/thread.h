/*
 * runtime/thread.h — the thread that started hint (hint_is_thread_main) and the thread level
 * hint provides (hint_init_thread, hint_query_thread).
 */
#ifndef HINT_RUNTIME_THREAD_H
#define HINT_RUNTIME_THREAD_H

/* hint_init calls it: the calling thread becomes the main thread. */
void rt_thread_note_main(void);

#endif
