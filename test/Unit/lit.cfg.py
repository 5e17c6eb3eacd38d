# -*- Python -*-
# lit runs the GoogleTest binaries too, so one command (check-doppler)
# reports every test.

import os

import lit.formats

config.name = "Doppler-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.doppler_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
