#!/usr/bin/env python3
"""The element types onnxruntime's CPU provider has no kernel for, per operator: for every
default-domain ONNX operator (its version at opset 20) and every type its first type variable
allows, build a one-node model and ask for a session; print the (operator, types) that fail with
NOT_IMPLEMENTED while another type of the same operator loads. src/onnx/legalize.rs's
RUNTIME_GAPS holds the integer and bool gaps of the operators fxonnx emits.

    python tests/runtime_gaps.py        (needs onnx and onnxruntime)
"""
import collections

import onnxruntime as ort
from onnx import TensorProto as T
from onnx import defs, helper

ort.set_default_logger_severity(4)
OPSET=20
name2t={"tensor(float)":T.FLOAT,"tensor(double)":T.DOUBLE,"tensor(float16)":T.FLOAT16,"tensor(bfloat16)":T.BFLOAT16,
"tensor(int8)":T.INT8,"tensor(uint8)":T.UINT8,"tensor(int16)":T.INT16,"tensor(uint16)":T.UINT16,"tensor(int32)":T.INT32,
"tensor(uint32)":T.UINT32,"tensor(int64)":T.INT64,"tensor(uint64)":T.UINT64,"tensor(bool)":T.BOOL}
res=collections.defaultdict(dict)
latest={}
for s in defs.get_all_schemas_with_history():
    if s.domain!="" or s.since_version>OPSET or s.deprecated: continue
    if s.name not in latest or latest[s.name].since_version<s.since_version: latest[s.name]=s
out=[]
for name,s in sorted(latest.items()):
    tcs={tc.type_param_str: [name2t[t] for t in tc.allowed_type_strs if t in name2t] for tc in s.type_constraints}
    if not s.inputs or not tcs: continue
    first=s.inputs[0].type_str
    if first not in tcs: continue
    status={}
    for t in tcs[first]:
        ins=[];names=[]
        ok=True
        for k,inp in enumerate(s.inputs):
            if inp.option==inp.option.Optional: break
            ts=inp.type_str
            if ts==first: tt=t
            elif ts in tcs: 
                if not tcs[ts]: ok=False;break
                tt=T.INT64 if T.INT64 in tcs[ts] else (T.BOOL if T.BOOL in tcs[ts] else tcs[ts][0])
            elif ts in name2t: tt=name2t[ts]
            else: ok=False;break
            ins.append(helper.make_tensor_value_info(f"i{k}",tt,None)); names.append(f"i{k}")
        if not ok: break
        outs=[]
        for k,o in enumerate(s.outputs[:1]):
            ts=o.type_str
            tt=t if ts==first else (tcs[ts][0] if ts in tcs and tcs[ts] else name2t.get(ts,T.FLOAT))
            outs.append(helper.make_tensor_value_info(f"o{k}",tt,None))
        n=helper.make_node(name,names,[o.name for o in outs])
        g=helper.make_graph([n],"g",ins,outs)
        m=helper.make_model(g,opset_imports=[helper.make_opsetid("",OPSET)],ir_version=10)
        try:
            ort.InferenceSession(m.SerializeToString(),providers=["CPUExecutionProvider"]); status[t]="ok"
        except Exception as e:
            status[t]="NO" if "NOT_IMPLEMENTED" in str(e) else "other"
    if "ok" in status.values():
        gaps=[T.DataType.Name(t) for t,v in status.items() if v=="NO"]
        if gaps: out.append((name,gaps))
for n,g in out: print(n, " ".join(g))
