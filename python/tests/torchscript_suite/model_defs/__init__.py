# Copied unchanged from PyTorch v2.6.0, test/onnx/model_defs/__init__.py.
# Copyright (c) 2016- Facebook, Inc and the PyTorch contributors. BSD-3-Clause; see ../LICENSE.pytorch.

from .op_test import *  # noqa: F403
from .squeezenet import *  # noqa: F403
from .srresnet import *  # noqa: F403
from .super_resolution import *  # noqa: F403
