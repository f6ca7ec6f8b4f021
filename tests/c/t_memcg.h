/*
 * t_memcg.h - the fixture the reclaim and swap-cache tests share: one
 * process in one memory cgroup over one device, its check (the group's
 * and the process's invariants) and its teardown.
 */
#ifndef SWAPLAB_T_MEMCG_H
#define SWAPLAB_T_MEMCG_H

#include "t.h"
#include "swaplab/reclaim.h"

typedef struct fx {
	sl_device *d;
	sl_swapset *s;
	sl_memcg *m;
	sl_proc *p;
} fx;

static inline void fx_check(fx *f, const char *file, int line)
{
	char msg[200];
	if (sl_memcg_check(f->m, msg, sizeof(msg)) || sl_proc_check(f->p, 1, msg, sizeof(msg))) {
		t_failed_checks++;
		fprintf(stderr, "  %s:%d: %s\n", file, line, msg);
	}
}
#define FX_CHECK(f) fx_check(f, __FILE__, __LINE__)

static inline void fx_fini(fx *f)
{
	sl_memcg_detach(f->m, f->p);
	sl_proc_destroy(f->p);
	sl_memcg_destroy(f->m);
	sl_swapset_destroy(f->s);
}

#endif
