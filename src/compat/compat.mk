# SPDX-License-Identifier: GPL-2.0
# dynprobe's compat layer, build half: the one place that reads the
# version of the kernel being built against. Documentation/compat.md
# explains the layer; src/compat/mod.rs is its Rust half.
#
# Kbuild includes this file with the kernel's VERSION and PATCHLEVEL set
# (the kernel's top Makefile exports them). It names the kernel's series
# to the Rust code (--cfg dynprobe_series_MAJOR_MINOR) and to the C shims
# (-DDYNPROBE_SERIES=0xMMmm), and turns each difference between the series
# into a feature of its own (--cfg dynprobe_FEATURE, -DDYNPROBE_FEATURE),
# so code asks for what differs, never for a version.

dynprobe_series := $(VERSION).$(PATCHLEVEL)

# The series dynprobe is written for. A new Debian point release of one
# of them needs nothing here; a new series is a line below and whatever
# features it brings.
dynprobe_supported_series := 7.2 7.3

# Features per series:
#  module_metadata_this_module: module! no longer defines
#    crate::THIS_MODULE; the module's ThisModule is
#    <LocalModule as kernel::ModuleMetadata>::THIS_MODULE (7.3).
#  userspace_init_fs: init's view of the file system is the exported
#    userspace_init_fs; init_task's root is an empty nullfs (7.3).
dynprobe_features_7.2 :=
dynprobe_features_7.3 := module_metadata_this_module userspace_init_fs

ifeq ($(filter $(dynprobe_series),$(dynprobe_supported_series)),)
$(error dynprobe supports Linux $(dynprobe_supported_series), not $(KERNELVERSION): see Documentation/compat.md)
endif

dynprobe_series_tag := $(subst .,_,$(dynprobe_series))
dynprobe_features := $(dynprobe_features_$(dynprobe_series))

rustflags-y += --cfg dynprobe_series_$(dynprobe_series_tag) \
	$(foreach f,$(dynprobe_features),--cfg dynprobe_$(f))
ccflags-y += -DDYNPROBE_SERIES=0x$(shell printf '%02x%02x' $(VERSION) $(PATCHLEVEL)) \
	$(foreach f,$(dynprobe_features),-DDYNPROBE_$(shell echo $(f) | tr a-z A-Z))
