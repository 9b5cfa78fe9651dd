// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs dynprobe/: the directory, its files and their file operations.
 * Only the VFS plumbing lives here; what a read shows and what a written
 * line means is decided by the Rust core (dynprobe_rs_*).
 */
#include <linux/fs.h>
#include <linux/kmemleak.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/tracefs.h>
#include <linux/uaccess.h>
#include "dynprobe/resolved.h"
#include "dynprobe/shim.h"

struct control_file {
	const char *name;
	umode_t mode;
};

static const struct control_file control_files[DYNPROBE_NR_FILES] = {
	[DYNPROBE_FILE_FUNCTION_EVENTS] = { "function_events", 0640 },
	[DYNPROBE_FILE_KPROBE_EVENTS] = { "kprobe_events", 0640 },
	[DYNPROBE_FILE_DYNAMIC_EVENTS] = { "dynamic_events", 0640 },
	[DYNPROBE_FILE_KPROBE_PROFILE] = { "kprobe_profile", 0440 },
	[DYNPROBE_FILE_README] = { "README", 0440 },
};

static struct dentry *dynprobe_dir;

/* What an open file keeps: the snapshot read() serves, if any. */
struct open_control {
	struct dynprobe_text *text;
	const u8 *data;
	size_t len;
};

static enum dynprobe_file file_kind(struct inode *inode)
{
	return (enum dynprobe_file)(uintptr_t)inode->i_private;
}

static int control_open(struct inode *inode, struct file *filp)
{
	bool writable = filp->f_mode & FMODE_WRITE;
	bool truncate = writable && (filp->f_flags & O_TRUNC);
	struct open_control *oc;
	int ret;

	oc = kzalloc(sizeof(*oc), GFP_KERNEL);
	if (!oc)
		return -ENOMEM;
	ret = dynprobe_rs_open(file_kind(inode), truncate,
			       filp->f_mode & FMODE_READ, &oc->text, &oc->data,
			       &oc->len);
	if (ret) {
		kfree(oc);
		return ret;
	}
	filp->private_data = oc;
	return 0;
}

static int control_release(struct inode *inode, struct file *filp)
{
	struct open_control *oc = filp->private_data;

	if (oc->text)
		dynprobe_rs_release(oc->text);
	kfree(oc);
	return 0;
}

static ssize_t control_read(struct file *filp, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	struct open_control *oc = filp->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, oc->data, oc->len);
}

/*
 * Hands a write to the Rust core in pieces of at most DYNPROBE_MAX_LINE + 1
 * bytes, as the kernel's probe event files read it, each piece starting at
 * a line: dynprobe_rs_write() runs its lines and says how far it got. The
 * first failing line ends the write with its error while the lines before
 * it stay applied.
 */
static ssize_t control_write(struct file *filp, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	enum dynprobe_file kind = file_kind(file_inode(filp));
	size_t done = 0;
	u8 *buf;
	int ret;

	buf = kmalloc(DYNPROBE_MAX_LINE + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	while (done < count) {
		size_t chunk = min_t(size_t, count - done, DYNPROBE_MAX_LINE + 1);

		if (copy_from_user(buf, ubuf + done, chunk)) {
			ret = -EFAULT;
			goto out;
		}
		ret = dynprobe_rs_write(kind, buf, chunk, done + chunk == count);
		if (ret < 0)
			goto out;
		if (!ret) {
			pr_warn("Line length is too long: Should be less than %d\n",
				DYNPROBE_MAX_LINE);
			ret = -EINVAL;
			goto out;
		}
		done += ret;
	}
	ret = 0;
out:
	kfree(buf);
	if (ret)
		return ret;
	*ppos += done;
	return done;
}

static const struct file_operations control_fops = {
	.owner = THIS_MODULE,
	.open = control_open,
	.read = control_read,
	.write = control_write,
	.release = control_release,
	.llseek = default_llseek,
};

int dynprobe_tracefs_init(void)
{
	int i;

	dynprobe_dir = dynprobe_call_tracefs_create_dir("dynprobe", NULL);
	if (IS_ERR_OR_NULL(dynprobe_dir)) {
		pr_err("cannot create tracefs directory dynprobe/\n");
		dynprobe_dir = NULL;
		return -ENODEV;
	}
	for (i = 0; i < DYNPROBE_NR_FILES; i++) {
		struct dentry *d;

		d = tracefs_create_file(control_files[i].name,
					control_files[i].mode, dynprobe_dir,
					(void *)(uintptr_t)i, &control_fops);
		if (IS_ERR_OR_NULL(d)) {
			pr_err("cannot create tracefs file dynprobe/%s\n",
			       control_files[i].name);
			dynprobe_tracefs_exit();
			return -ENODEV;
		}
	}
	return 0;
}

void dynprobe_tracefs_exit(void)
{
	if (dynprobe_dir)
		dynprobe_call_tracefs_remove(dynprobe_dir);
	dynprobe_dir = NULL;
}

/* A probe error of the kernel's: its message table outlives dynprobe. */
void dynprobe_log_err(const char *subsystem, const char *cmd, u8 err_type,
		      u16 pos)
{
	dynprobe_call_tracing_log_err(NULL, subsystem, cmd,
				      dynprobe_ksyms.trace_probe_err_text,
				      err_type, pos);
}

/*
 * error_log keeps a pointer to the message table, not the text, and reads
 * it whenever error_log is read, also after this module is gone. So
 * dynprobe's own messages (function_events syntax, dynevent's "No matching
 * dynamic event type") go into a table that is never freed, each message
 * copied there once when first logged: a few hundred bytes at most per
 * module load, and nothing when none of them is ever logged. Once the
 * module is gone and error_log has dropped the entries that point to it,
 * the table is left unreferenced on purpose: kmemleak is told so.
 */
#define OWN_MESSAGES_MAX 16

static DEFINE_MUTEX(own_messages_lock);
static const char **own_messages;

void dynprobe_log_own_err(const char *subsystem, const char *cmd,
			  const char *message, u16 pos)
{
	int i;

	guard(mutex)(&own_messages_lock);
	if (!own_messages) {
		own_messages = kcalloc(OWN_MESSAGES_MAX, sizeof(*own_messages),
				       GFP_KERNEL);
		if (!own_messages)
			return;
		kmemleak_not_leak(own_messages);
	}
	for (i = 0; i < OWN_MESSAGES_MAX && own_messages[i]; i++) {
		if (!strcmp(own_messages[i], message))
			break;
	}
	if (i == OWN_MESSAGES_MAX)
		return;
	if (!own_messages[i]) {
		own_messages[i] = kstrdup(message, GFP_KERNEL);
		if (!own_messages[i])
			return;
	}
	dynprobe_call_tracing_log_err(NULL, subsystem, cmd, own_messages, i,
				      pos);
}
