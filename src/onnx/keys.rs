//! The `metadata_props` keys torch.onnx writes on nodes, values and the graph (the lowering stamps
//! them, `translate/metadata.rs`; the export check and module functions read them).

pub const NAMESPACE: &str = "namespace";
pub const CLASS_HIERARCHY: &str = "pkg.torch.onnx.class_hierarchy";
pub const NAME_SCOPES: &str = "pkg.torch.onnx.name_scopes";
pub const FX_NODE: &str = "pkg.torch.onnx.fx_node";
pub const STACK_TRACE: &str = "pkg.torch.onnx.stack_trace";
pub const ORIGINAL_NODE_NAME: &str = "pkg.torch.onnx.original_node_name";
pub const INPUT_KIND: &str = "pkg.torch.export.graph_signature.InputSpec.kind";
pub const INPUT_PERSISTENT: &str = "pkg.torch.export.graph_signature.InputSpec.persistent";
pub const OUTPUT_KIND: &str = "pkg.torch.export.graph_signature.OutputSpec.kind";
pub const GRAPH_SIGNATURE: &str = "pkg.torch.export.ExportedProgram.graph_signature";
pub const RANGE_CONSTRAINTS: &str = "pkg.torch.export.ExportedProgram.range_constraints";
