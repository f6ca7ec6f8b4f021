/*
 * test_rwl.c - the reclaim workloads' operation streams (rwl.c): their
 * shape per kind, determinism per seed, validation messages.
 */
#include <stdlib.h>
#include "t.h"
#include "swaplab/rwl.h"

typedef struct tally {
	uint64_t ops[SL_ROP_DONE + 1];
	uint64_t touched_w, touched_r;
	uint64_t hash;
	uint32_t max_proc;
	int open[4096];            /* started and not exited, by process */
	int bad;                   /* an op of a process not running */
} tally;

static int count(void *ctx, const sl_rop *op)
{
	tally *t = ctx;
	t->ops[op->kind]++;
	t->hash = (t->hash ^ ((uint64_t)op->kind << 56 ^ (uint64_t)op->proc << 32 ^ op->first ^
			      (uint64_t)op->npages << 20 ^ (uint64_t)op->write << 60)) * 1099511628211u;
	if (op->kind == SL_ROP_PHASE || op->kind == SL_ROP_DONE)
		return 0;
	if (op->proc >= 4096)
		return t->bad = 1, 0;
	if (op->proc > t->max_proc)
		t->max_proc = op->proc;
	if (op->kind == SL_ROP_START)
		t->open[op->proc] = 1;
	else if (!t->open[op->proc])
		t->bad = 1;
	if (op->kind == SL_ROP_EXIT)
		t->open[op->proc] = 0;
	if (op->kind == SL_ROP_TOUCH)
		*(op->write ? &t->touched_w : &t->touched_r) += op->npages;
	return 0;
}

TEST(rwl_usemem_writes_every_page_then_rereads)
{
	sl_rwl_params p;
	tally t = { 0 };
	sl_rwl_defaults(&p, SL_RWL_USEMEM);
	p.nr_procs = 3;
	p.proc_pages = 1000;
	p.chunk_pages = 64;
	p.reread_passes = 2;
	CHECK_EQ(sl_rwl_play(&p, count, &t), 0);
	CHECK_EQ(t.ops[SL_ROP_START], 3);
	CHECK_EQ(t.ops[SL_ROP_MMAP], 3);
	CHECK_EQ(t.ops[SL_ROP_EXIT], 3);
	CHECK_EQ(t.ops[SL_ROP_DONE], 1);
	CHECK_EQ(t.touched_w, 3000);
	CHECK_EQ(t.touched_r, 6000);
	CHECK_EQ(t.ops[SL_ROP_TOUCH], 3 * 16 * 3);  /* 16 chunks a pass */
	CHECK(!t.bad);
}

TEST(rwl_pmbench_read_ratio_and_determinism)
{
	sl_rwl_params p;
	tally a = { 0 }, b = { 0 }, c = { 0 };
	sl_rwl_defaults(&p, SL_RWL_PMBENCH);
	p.wss_pages = 4096;
	p.accesses = 20000;
	p.read_pct = 70;
	CHECK_EQ(sl_rwl_play(&p, count, &a), 0);
	CHECK_EQ(sl_rwl_play(&p, count, &b), 0);
	CHECK_EQ(a.hash, b.hash);
	/* 4096 set-up writes, then ~30 % of 20000 */
	CHECK(a.touched_w > 4096 + 5400 && a.touched_w < 4096 + 6600);
	CHECK_EQ(a.touched_r + a.touched_w, 4096 + 20000);
	p.seed = 2;
	CHECK_EQ(sl_rwl_play(&p, count, &c), 0);
	CHECK(c.hash != a.hash);
}

static int zipf_first_page_hits(void *ctx, const sl_rop *op)
{
	uint64_t *h = ctx;
	if (op->kind == SL_ROP_TOUCH && op->npages == 1)
		h[op->first < 16 ? 0 : 1]++;
	return 0;
}

TEST(rwl_pmbench_zipf_concentrates_on_low_ranks)
{
	sl_rwl_params p;
	uint64_t h[2] = { 0, 0 }, u[2] = { 0, 0 };
	sl_rwl_defaults(&p, SL_RWL_PMBENCH);
	p.wss_pages = 4096;
	p.accesses = 20000;
	p.dist = SL_RWL_ZIPF;
	p.zipf_s = 1.0;
	CHECK_EQ(sl_rwl_play(&p, zipf_first_page_hits, h), 0);
	p.dist = SL_RWL_UNIFORM;
	CHECK_EQ(sl_rwl_play(&p, zipf_first_page_hits, u), 0);
	/* H(16)/H(4096) ~ 0.38 of the accesses on ranks 1..16; uniform 16/4096 */
	CHECK(h[0] > 6000 && h[0] < 9000);
	CHECK(u[0] < 200);
}

TEST(rwl_build_runs_jobs_times_generations_processes)
{
	sl_rwl_params p;
	tally t = { 0 };
	sl_rwl_defaults(&p, SL_RWL_BUILD);
	p.jobs = 3;
	p.generations = 5;
	p.size_median_pages = 300;
	p.size_min_pages = 100;
	p.size_max_pages = 1000;
	CHECK_EQ(sl_rwl_play(&p, count, &t), 0);
	CHECK_EQ(t.ops[SL_ROP_START], 15);
	CHECK_EQ(t.ops[SL_ROP_EXIT], 15);
	CHECK_EQ(t.max_proc, 14);
	CHECK(!t.bad);
	for (int i = 0; i < 15; i++)
		CHECK(!t.open[i]);
}

TEST(rwl_validate_names_the_problem)
{
	sl_rwl_params p;
	char msg[128];
	sl_rwl_defaults(&p, SL_RWL_PMBENCH);
	CHECK_EQ(sl_rwl_validate(&p, msg, sizeof(msg)), 0);
	p.read_pct = 101;
	CHECK_EQ(sl_rwl_validate(&p, msg, sizeof(msg)), -1);
	CHECK(!strcmp(msg, "read percentage must be 0..100"));
	sl_rwl_defaults(&p, SL_RWL_BUILD);
	p.life_min_passes = 4;
	CHECK_EQ(sl_rwl_validate(&p, msg, sizeof(msg)), -1);
	CHECK(!strcmp(msg, "build lifetime passes need min <= max <= 1000"));
	for (int i = 0; sl_rwl_preset_at(i); i++) {
		const sl_rwl_preset *pr = sl_rwl_preset_at(i);
		sl_rwl_defaults(&p, pr->kind);
		pr->apply(&p);
		CHECK_EQ(sl_rwl_validate(&p, msg, sizeof(msg)), 0);
		CHECK(sl_rwl_preset_lookup(pr->name) == pr);
	}
}
