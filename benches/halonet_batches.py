"""HaloNet (timm halonet26t, 10 classes, random init, seed 0) exported with a dynamic batch
(Dim batch 1..8, example batch 2) by fxonnx, checked in ONNX Runtime against eager at batch 1, 3, 8."""
import subprocess, sys, numpy as np, onnxruntime as ort, torch, timm
fx, rtol, atol = sys.argv[1], 1e-3, 1e-4
torch.manual_seed(0)
m = timm.create_model("halonet26t", pretrained=False, num_classes=10).eval()
ep = torch.export.export(m, (torch.randn(2, 3, 256, 256),),
                         dynamic_shapes=({0: torch.export.Dim("batch", min=1, max=8)},), strict=False)
torch.export.save(ep, "/tmp/halo/measure.pt2")
subprocess.run([fx, "export", "/tmp/halo/measure.pt2", "-o", "/tmp/halo/measure.onnx", "--quiet"], check=True)
s = ort.InferenceSession("/tmp/halo/measure.onnx", providers=["CPUExecutionProvider"])
for b in (1, 3, 8):
    x = torch.randn(b, 3, 256, 256)
    with torch.no_grad():
        e = m(x).numpy()
    y = s.run(None, {s.get_inputs()[0].name: x.numpy()})[0]
    ratio = float((np.abs(y - e) / (atol + rtol * np.abs(e))).max())
    print(f"batch {b}: max |err| {np.abs(y - e).max():.3g}, |logits| max {np.abs(e).max():.3g}, tol ratio {ratio:.3g}",
          "pass" if ratio <= 1 else "FAIL")
