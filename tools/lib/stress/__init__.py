# SPDX-License-Identifier: GPL-2.0
"""tools/guest-stress.py, by concern."""
