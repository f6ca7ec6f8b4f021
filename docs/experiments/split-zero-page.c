/*
 * split-zero-page.c - finding F1 (docs/kernel-findings.md).
 *
 * Maps one mTHP folio of SIZE KiB in a 2 MiB-aligned MADV_HUGEPAGE region,
 * writes all of it (or with HALF=1 only its second half), drops CUT pages
 * (CUT < 0: the last -CUT pages) with MADV_DONTNEED, optionally rewrites them,
 * then MADV_PAGEOUTs the region and prints, per page, S (swapped), P (present)
 * or - (none), the size's split/split_failed/swpout deltas, and whether a
 * present page is the shared zero page (/proc/kpageflags bit 24).
 * Usage: with-zram-swap.sh SIZE ./split-zero-page SIZE CUT [rewrite]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
static long rd(const char *p){FILE*f=fopen(p,"r");long v=-1;if(f){if(fscanf(f,"%ld",&v)!=1)v=-1;fclose(f);}return v;}
static uint64_t pm(int fd, void *a){uint64_t e;pread(fd,&e,8,((uintptr_t)a/4096)*8);return e;}
int main(int argc,char**argv){
  int kb = atoi(argv[1]), cut = atoi(argv[2]); /* folio kB, pages to DONTNEED at the start */
  size_t sz=4<<20; char *raw=mmap(0,sz*2,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  char *a=(char*)(((uintptr_t)raw+sz-1)&~(sz-1));
  madvise(a,sz,MADV_HUGEPAGE);
  char p[256]; long s0,f0,sp0;
  snprintf(p,256,"/sys/kernel/mm/transparent_hugepage/hugepages-%dkB/stats/split",kb); sp0=rd(p);
  snprintf(p,256,"/sys/kernel/mm/transparent_hugepage/hugepages-%dkB/stats/split_failed",kb); f0=rd(p);
  snprintf(p,256,"/sys/kernel/mm/transparent_hugepage/hugepages-%dkB/stats/swpout",kb); s0=rd(p);
  int npg=kb/4;
  if (getenv("HALF")) memset(a+npg/2*4096,0x11,npg/2*4096); else memset(a,0x11,npg*4096);
  char *c = cut >= 0 ? a : a + (npg + cut) * 4096; int n = cut >= 0 ? cut : -cut;
  madvise(c,n*4096,MADV_DONTNEED);
  if (argc>3) memset(c,0x11,n*4096); /* rewrite the cut part */
  madvise(a,sz,MADV_PAGEOUT);
  snprintf(p,256,"/sys/kernel/mm/transparent_hugepage/hugepages-%dkB/stats/split",kb); long sp1=rd(p);
  snprintf(p,256,"/sys/kernel/mm/transparent_hugepage/hugepages-%dkB/stats/split_failed",kb); long f1=rd(p);
  snprintf(p,256,"/sys/kernel/mm/transparent_hugepage/hugepages-%dkB/stats/swpout",kb); long s1=rd(p);
  int fd=open("/proc/self/pagemap",O_RDONLY);
  printf("split +%ld split_failed +%ld swpout +%ld\n",sp1-sp0,f1-f0,s1-s0);
  for(int i=0;i<npg;i++){uint64_t e=pm(fd,a+i*4096); printf("%d:%s ",i,(e>>62&1)?"S":((e>>63)?(((e&((1ULL<<55)-1))==0)?"Z":"P"):"-"));} printf("\n");
  int kf=open("/proc/kpageflags",O_RDONLY);
  for(int i=0;i<npg;i+=8){uint64_t e=pm(fd,a+i*4096); if(!(e>>63)) continue; uint64_t pfn=e&((1ULL<<55)-1), fl=0; pread(kf,&fl,8,pfn*8); printf("page %d pfn %llx zero_page=%d\n",i,(unsigned long long)pfn,(int)((fl>>24)&1));}
  return 0;}
