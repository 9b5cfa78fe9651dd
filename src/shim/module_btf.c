// SPDX-License-Identifier: GPL-2.0
/*
 * The BTF of a loaded module, for BTF arguments on its functions.
 *
 * The kernel keeps a module's BTF in the module's struct btf, private to
 * kernel/bpf/btf.c: struct module's btf_data points into the module's
 * load image only until the module is live (do_init_module() clears it).
 * What the kernel does export is the blob itself, as the sysfs file
 * /sys/kernel/btf/<module>, and what it takes to read a file: this opens
 * it from init's root (as kernel_read_file_from_path_initns() does), so
 * the mount namespace of whoever writes a definition does not matter, and
 * reads it with kernel_read(). kernel_read_file() itself is not used: its
 * LSM hook wants to know what the file is for, and no READING_* id fits
 * (IPE warns at READING_UNKNOWN). The copy belongs to us, valid whatever
 * happens to the module afterwards; no reference on the module is needed.
 *
 * What makes it C: init's root is taken with task_lock() and
 * get_fs_root(), static inlines.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/module.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include <dynprobe/shim.h>

/*
 * Largest module BTF read. The biggest modules' BTF is a few MiB; the cap
 * bounds what a corrupt size could make us allocate (the index built for
 * the blob is at most a third of its size).
 */
#define DYNPROBE_MODULE_BTF_MAX (64 << 20)

/*
 * The root of init's file system view, where /sys is: the kernel's own
 * reads "from init's namespace" use the same one. Linux 7.3 put an
 * empty nullfs under everything and init_task's root is that, so it
 * keeps the fs_struct of userspace's init for this (userspace_init_fs);
 * before, init_task's was it.
 */
static void dynprobe_init_fs_root(struct path *root)
{
#ifdef DYNPROBE_USERSPACE_INIT_FS
	get_fs_root(userspace_init_fs, root);
#else
	task_lock(&init_task);
	get_fs_root(init_task.fs, root);
	task_unlock(&init_task);
#endif
}

void *dynprobe_module_btf(const char *module, size_t *len)
{
	char name[sizeof("/sys/kernel/btf/") + MODULE_NAME_LEN];
	struct file *file;
	struct path root;
	loff_t size, pos = 0;
	void *blob;

	if (!IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES))
		return NULL;
	/*
	 * A module name is one path component; "vmlinux" is the kernel's own
	 * BTF, which is no module's.
	 */
	if (!module[0] || module[0] == '.' || strchr(module, '/') ||
	    strnlen(module, MODULE_NAME_LEN) >= MODULE_NAME_LEN ||
	    !strcmp(module, "vmlinux"))
		return NULL;
	snprintf(name, sizeof(name), "/sys/kernel/btf/%s", module);

	dynprobe_init_fs_root(&root);
	file = file_open_root(&root, name, O_RDONLY, 0);
	path_put(&root);
	if (IS_ERR(file))
		return NULL;

	/* The attribute's size is the blob's (btf_module_notify()). */
	size = i_size_read(file_inode(file));
	blob = NULL;
	if (S_ISREG(file_inode(file)->i_mode) && size > 0 &&
	    size <= DYNPROBE_MODULE_BTF_MAX)
		blob = vmalloc(size);
	while (blob && pos < size) {
		if (kernel_read(file, blob + pos, size - pos, &pos) <= 0)
			break;
	}
	fput(file);
	if (blob && pos != size) {
		vfree(blob);
		blob = NULL;
	}
	if (blob)
		*len = size;
	return blob;
}

void dynprobe_module_btf_free(void *blob)
{
	vfree(blob);
}
