// SPDX-License-Identifier: GPL-2.0
/*
 * A module using dynprobe's in-kernel API (include/dynprobe/api.h):
 *
 * - synthetic event synthetic/dynprobe_sample_c, made with the command
 *   builder, enabled here and traced from a timer every 10 ms, in turn
 *   all at once, from an array and piecewise (field "how": 0, 1, 2);
 * - function event functions/vfs_read, made in one call from an array;
 * - kprobe event dynprobe_sample_c/open, made from a line. It is not
 *   deleted here: dynprobe removes it when this module unloads.
 *
 * The synthetic event is held (dynprobe_event_get()) while the module is
 * loaded, so dynprobe refuses to remove it (EBUSY).
 *
 * Parameter extra: one more line of dynamic_events to run at load; if it
 * fails, so does the load, with its errno (and its error_log entry).
 *
 * Parameter init_wait: the load waits (at most 20 s) until 1 is written
 * to /sys/module/dynprobe_sample/parameters/init_go, so that tests can
 * probe the module while it is coming; the extra line runs after that,
 * in sample_extra(), a function of the init text.
 *
 * Parameter tick_only: only the timer runs, counting in sample_tick(),
 * and nothing of the API is used, at load or unload: a module with a
 * function that runs all the time whose unloading waits for nothing of
 * dynprobe's (selftests/fprobe/list_module_going.tc).
 */

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/timer.h>
#include "dynprobe/api.h"

#define SAMPLE_EVENT "dynprobe_sample_c"

static struct dynprobe_event *sample_event;
static struct timer_list sample_timer;
static u64 sample_count;

static char *extra;
module_param(extra, charp, 0);
MODULE_PARM_DESC(extra, "a line of dynamic_events to run at load");

static bool init_wait;
module_param(init_wait, bool, 0);
MODULE_PARM_DESC(init_wait, "wait for init_go before the extra line");
static bool init_go;
module_param(init_go, bool, 0200);
MODULE_PARM_DESC(init_go, "ends init_wait's wait");
static bool tick_only;
module_param(tick_only, bool, 0);
MODULE_PARM_DESC(tick_only, "only tick: use nothing of dynprobe's API");

/* Traces one record, in the way the count picks. */
static void sample_trace(u64 count)
{
	static const char source[] = "c-timer";
	struct dynprobe_synth_state state;
	u64 vals[3];

	switch (count % 3) {
	case 0:
		dynprobe_synth_trace(sample_event, 3, count, (u64)0,
				     (u64)(unsigned long)source);
		break;
	case 1:
		vals[0] = count;
		vals[1] = 1;
		vals[2] = (u64)(unsigned long)source;
		dynprobe_synth_trace_array(sample_event, vals, 3);
		break;
	default:
		if (dynprobe_synth_trace_start(sample_event, &state))
			break;
		dynprobe_synth_add_next_val(count, &state);
		dynprobe_synth_add_next_val(2, &state);
		dynprobe_synth_add_next_val((u64)(unsigned long)source, &state);
		dynprobe_synth_trace_end(&state);
		break;
	}
}

static void sample_tick(struct timer_list *t)
{
	u64 count = sample_count++;

	if (!tick_only)
		sample_trace(count);
	mod_timer(&sample_timer, jiffies + msecs_to_jiffies(10));
}

static int sample_synth_create(void)
{
	struct dynprobe_cmd cmd;
	char buf[128];

	dynprobe_cmd_init(&cmd, buf, sizeof(buf));
	dynprobe_synth_cmd_start(&cmd, SAMPLE_EVENT);
	dynprobe_synth_add_field(&cmd, "u64", "count");
	dynprobe_synth_add_field(&cmd, "unsigned int", "how");
	dynprobe_synth_add_field(&cmd, "char[16]", "source");
	return dynprobe_cmd_create(&cmd);
}

/*
 * What the builder refuses before anything runs: a word that would not
 * stay one word, a word after a function event's return, and a command
 * too long for its buffer. The first error sticks: later calls add
 * nothing and return it, so a sequence of calls needs one check, at the
 * end.
 */
static int sample_refusals(void)
{
	struct dynprobe_cmd cmd;
	char buf[32];

	dynprobe_cmd_init(&cmd, buf, sizeof(buf));
	if (dynprobe_probe_cmd_start(&cmd, DYNPROBE_KPROBE_EVENTS, 'p',
				     "sample/refused", "vfs_read x") != -EINVAL ||
	    dynprobe_probe_add_arg(&cmd, "a", "%di") != -EINVAL)
		return -EINVAL;

	dynprobe_cmd_init(&cmd, buf, sizeof(buf));
	dynprobe_probe_cmd_start(&cmd, DYNPROBE_KPROBE_EVENTS, 'p',
				 "sample/refused", "vfs_read");
	dynprobe_probe_add_arg(&cmd, "a_long_argument_name", "%di");
	if (dynprobe_cmd_create(&cmd) != -E2BIG)
		return -EINVAL;

	dynprobe_cmd_init(&cmd, buf, sizeof(buf));
	dynprobe_function_cmd_start(&cmd, "vfs_read");
	dynprobe_function_set_return(&cmd, "s64", "ret");
	if (dynprobe_function_add_arg(&cmd, "u64", "count") != -EINVAL)
		return -EINVAL;

	/* A BTF-named argument that would close the list, or be two. */
	dynprobe_cmd_init(&cmd, buf, sizeof(buf));
	dynprobe_function_cmd_start(&cmd, "vfs_read");
	if (dynprobe_function_add_arg(&cmd, NULL, "file)") != -EINVAL)
		return -EINVAL;
	dynprobe_cmd_init(&cmd, buf, sizeof(buf));
	dynprobe_function_cmd_start(&cmd, "vfs_read");
	if (dynprobe_function_add_arg(&cmd, NULL, "file, count") != -EINVAL)
		return -EINVAL;
	return 0;
}

/*
 * With no type, the builder's arguments and return value are named and
 * typed from BTF: "ksys_write(...) -> ret:s64" records every parameter
 * and the return value.
 */
static int sample_btf_event_create(void)
{
	struct dynprobe_cmd cmd;
	char buf[64];

	dynprobe_cmd_init(&cmd, buf, sizeof(buf));
	dynprobe_function_cmd_start(&cmd, "ksys_write");
	dynprobe_function_add_arg(&cmd, NULL, "...");
	dynprobe_function_set_return(&cmd, NULL, "ret:s64");
	return dynprobe_cmd_create(&cmd);
}

/* init_wait's wait, before anything is made. */
static int __init sample_wait(void)
{
	unsigned int ms;

	for (ms = 0; init_wait && !READ_ONCE(init_go); ms += 10) {
		if (ms >= 20000)
			return -ETIMEDOUT;
		msleep(10);
	}
	return 0;
}

/* The extra line, run by a function of the init text. */
static noinline int __init sample_extra(void)
{
	return extra ? dynprobe_create(DYNPROBE_DYNAMIC_EVENTS, extra) : 0;
}

static const struct dynprobe_field read_args[] = {
	{ .type = "x64", .name = "file" },
	{ .type = NULL, .name = NULL },	/* buf: skipped */
	{ .type = "u64", .name = "count" },
};

static void sample_start_timer(void)
{
	timer_setup(&sample_timer, sample_tick, 0);
	mod_timer(&sample_timer, jiffies + msecs_to_jiffies(10));
}

static int __init sample_init(void)
{
	int ret;

	ret = sample_wait();
	if (ret)
		return ret;
	if (tick_only) {
		sample_start_timer();
		return 0;
	}
	ret = sample_refusals();
	if (ret) {
		pr_err("the command builder accepted what it must refuse\n");
		return ret;
	}
	ret = sample_synth_create();
	if (ret)
		return ret;
	ret = dynprobe_function_event_create("vfs_read", read_args,
					     ARRAY_SIZE(read_args));
	if (ret)
		goto out_synth;
	ret = dynprobe_create(DYNPROBE_KPROBE_EVENTS,
			      "p:dynprobe_sample_c/open do_sys_openat2 dfd=%di:s32");
	if (ret)
		goto out_function;
	ret = sample_btf_event_create();
	if (ret)
		goto out_function;
	ret = sample_extra();
	if (ret)
		goto out_function;
	sample_event = dynprobe_event_get("synthetic", SAMPLE_EVENT);
	if (IS_ERR(sample_event)) {
		ret = PTR_ERR(sample_event);
		goto out_function;
	}
	ret = dynprobe_event_enable(sample_event, true);
	if (ret)
		goto out_put;
	sample_start_timer();
	return 0;

out_put:
	dynprobe_event_put(sample_event);
out_function:
	dynprobe_delete(DYNPROBE_FUNCTION_EVENTS, "vfs_read");
out_synth:
	dynprobe_delete(DYNPROBE_SYNTHETIC_EVENTS, SAMPLE_EVENT);
	/* The kprobe event, and the extra line's, go with the module. */
	return ret;
}

static void __exit sample_exit(void)
{
	int ret;

	timer_delete_sync(&sample_timer);
	if (tick_only)
		return;
	dynprobe_event_enable(sample_event, false);
	dynprobe_event_put(sample_event);
	ret = dynprobe_delete(DYNPROBE_SYNTHETIC_EVENTS, SAMPLE_EVENT);
	if (ret)
		pr_warn("deleting %s: %d\n", SAMPLE_EVENT, ret);
	ret = dynprobe_delete(DYNPROBE_FUNCTION_EVENTS, "vfs_read");
	if (ret)
		pr_warn("deleting functions/vfs_read: %d\n", ret);
}

module_init(sample_init);
module_exit(sample_exit);
MODULE_DESCRIPTION("dynprobe's in-kernel API from C");
MODULE_LICENSE("GPL");
