// SPDX-License-Identifier: GPL-2.0
// A small program with DWARF for cmd/tests/debuginfo.rs: parameters,
// locals, members, an inline function, a global. Built (and the built
// file committed as srcprobe-fixture) with, so that only twice() is
// inlined:
//   gcc -g -O2 -fno-inline-functions -fno-inline-small-functions \
//       -fno-inline-functions-called-once -fno-asynchronous-unwind-tables \
//       -nostdlib -static -Wl,--build-id -o srcprobe-fixture srcprobe-fixture.c
struct point {
	int x;
	int y;
};

struct box {
	struct point *p;
	const char *name;
	long n;
};

long total;

static inline int twice(int v)
{
	return v * 2;
}

long sum(struct box *b, int k)
{
	long s = 0;
	int i;

	for (i = 0; i < k; i++)
		s += twice(b->p[i].x) + b->p[i].y;
	total += s;
	return s;
}

int scale(int v)
{
	return twice(v) + 1;
}

static struct point pts[3] = { { 1, 2 }, { 3, 4 }, { 5, 6 } };

void _start(void)
{
	struct box b = { pts, "pts", 3 };

	total = sum(&b, 3) + scale((int)total);
	for (;;)
		;
}
