# SPDX-License-Identifier: GPL-2.0
"""tools/stress/guest-stress.py, by concern."""
