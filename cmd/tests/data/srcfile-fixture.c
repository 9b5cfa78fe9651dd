// SPDX-License-Identifier: GPL-2.0
// DWARF for cmd/tests/srcfile.rs: places by source line and pattern,
// $params and $vars, bit-field members, globals for --externs. Built in
// the root (gcc 14, DWARF 5; the flags keep weigh and pick out of line)
// as srcfile-fixture, committed, with:
//   gcc -g -O2 -fno-inline-functions -fno-inline-small-functions \
//       -fno-inline-functions-called-once -fno-asynchronous-unwind-tables \
//       -nostdlib -static -Wl,--build-id -o srcfile-fixture srcfile-fixture.c
struct flags {
	unsigned int lo : 3;
	unsigned int mid : 5;
	unsigned int wide : 20;
	unsigned char tag;
	unsigned short odd : 7;
};

struct item {
	struct flags f;
	const char *name;
	long weight;
};

long seen;
static const char *const names[] = { "a", "b" };
void *anchor;

long weigh(struct item *it, int times)
{
	long w = it->weight;
	int i;

	for (i = 0; i < times; i++)
		w += it->f.mid;	/* weigh: the loop */
	seen += w;
	return w;
}

int pick(struct item *it, int which)
{
	int got = it->f.lo + which;

	if (got > 3) {
		long extra = it->f.wide;	/* pick: the block */

		seen += extra;
	}
	anchor = (void *)names[which & 1];
	return got;
}

static struct item items[2] = {
	{ { 1, 2, 3, 4, 5 }, "one", 10 },
	{ { 5, 6, 7, 8, 9 }, "two", 20 },
};

void _start(void)
{
	seen = weigh(&items[0], 3) + pick(&items[1], (int)seen);
	for (;;)
		;
}
