/*
 * fallback-zero-tails.c - finding F2 (docs/kernel-findings.md).
 *
 * Fills a 64 MiB swap device with 16383 order-0 pages, frees every other
 * one (no 128 KiB aligned range is left free), then MADV_PAGEOUTs one 128 KiB
 * folio whose first 64 KiB only was written. Prints the fallback delta and
 * the slot of each of its 32 pages.
 * Usage: with-zram-swap.sh 128 ./fallback-zero-tails
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
static uint64_t pm(int fd, void *a){uint64_t e;pread(fd,&e,8,((uintptr_t)a/4096)*8);return e;}
static char *map2m(size_t sz, int adv){char *raw=mmap(0,sz+(2<<20),PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
 char *a=(char*)(((uintptr_t)raw+(2<<20)-1)&~(uintptr_t)((2<<20)-1)); madvise(a,sz,adv); return a;}
static long rd(const char *p){FILE*f=fopen(p,"r");long v=-1;if(f){if(fscanf(f,"%ld",&v)!=1)v=-1;fclose(f);}return v;}
int main(void){
  int fd=open("/proc/self/pagemap",O_RDONLY);
  size_t nb=16383; char *b=map2m(nb*4096, MADV_NOHUGEPAGE);
  memset(b,0x11,nb*4096); madvise(b,nb*4096,MADV_PAGEOUT);
  int sw=0; for(size_t i=0;i<nb;i++) sw+=(pm(fd,b+i*4096)>>62)&1; printf("B swapped %d\n",sw);
  for(size_t i=0;i<nb;i+=2) madvise(b+i*4096,4096,MADV_DONTNEED);
  char *a=map2m(2<<20, MADV_HUGEPAGE);
  memset(a,0x11,16*4096);               /* a 128K folio, only its first 64K written */
  long f0=rd("/sys/kernel/mm/transparent_hugepage/hugepages-128kB/stats/swpout_fallback");
  madvise(a,32*4096,MADV_PAGEOUT);
  long f1=rd("/sys/kernel/mm/transparent_hugepage/hugepages-128kB/stats/swpout_fallback");
  printf("fallback +%ld\n",f1-f0);
  for(int i=0;i<32;i++){uint64_t e=pm(fd,a+i*4096); if((e>>62)&1) printf("%d:%llu ",i,(unsigned long long)((e>>5)&((1ULL<<50)-1))); else printf("%d:%s ",i,(e>>63)?"P":"-");}
  printf("\n"); return 0;}
