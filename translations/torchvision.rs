//! torchvision's detection ops (`torchvision::nms`, `roi_align`, `roi_pool`, `ps_roi_align`), on
//! ONNX's `NonMaxSuppression`, `RoiAlign` and `MaxRoiPool`. Regions of interest come as torchvision
//! gives them: `[K, 5]` rows of (batch index, x1, y1, x2, y2).

use crate::translate::prelude::*;
use crate::translations;

/// Columns `start..end` of the `[K, 5]` rois.
fn roi_columns(op: &mut Builder, rois: Value, start: i64, end: i64) -> Value {
    let (s, e, a) = (op.const_i64s(&[start]), op.const_i64s(&[end]), op.const_i64s(&[1]));
    op.Slice(rois, s, e, Some(a), None)
}

/// RoiAlign of `input` over torchvision's `[K, 5]` rois, in the input's float type.
fn roi_align_of(
    op: &mut Builder,
    input: Value,
    rois: Value,
    spatial_scale: f64,
    pooled: (i64, i64),
    sampling_ratio: i64,
    aligned: bool,
) -> OpResult<Value> {
    let t = float_result_dtype(op, input)?;
    let x = cast(op, input, t);
    let rois = cast(op, rois, t);
    let boxes = roi_columns(op, rois, 1, 5);
    let batch = roi_columns(op, rois, 0, 1);
    let axis = op.const_i64s(&[1]);
    let batch = op.Squeeze(batch, Some(axis));
    let batch = cast(op, batch, DType::Int64);
    // torchvision samples ceil(roi size / bins) points per bin when sampling_ratio <= 0, as ONNX's 0.
    Ok(op
        .RoiAlign(x, boxes, batch)
        .mode("avg")
        .output_height(pooled.0)
        .output_width(pooled.1)
        .sampling_ratio(sampling_ratio.max(0))
        .spatial_scale(spatial_scale as f32)
        .coordinate_transformation_mode(if aligned { "half_pixel" } else { "output_half_pixel" })
        .out())
}

fn pooled_size(h: SymInt, w: SymInt, what: &str) -> OpResult<(i64, i64)> {
    match (h, w) {
        (SymInt::Const(h), SymInt::Const(w)) if h > 0 && w > 0 => Ok((h, w)),
        _ => bail!("{what} needs static, positive pooled sizes"),
    }
}

translations! {
    /// torchvision::_cuda_version() -> int
    #[target("torchvision::_cuda_version")]
    fn _cuda_version(op) -> () {
        // torchvision's ops ask which CUDA they were built for before dispatching; the exported
        // call's value is unnamed, never read. (A program that read it would fail: no value.)
    }

    /// torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor
    #[target("torchvision::nms")]
    fn nms(op, dets: Tensor, scores: Tensor, iou_threshold: f64) -> OpResult<Value> {
        // One batch and one class of ONNX NonMaxSuppression, keeping up to every box: the kept
        // indices come out by decreasing score, as torchvision's do.
        let boxes = cast(op, dets, DType::Float);
        let scores = cast(op, scores, DType::Float);
        let zero = op.const_i64s(&[0]);
        let boxes = op.Unsqueeze(boxes, zero);
        let scores = op.Unsqueeze(scores, zero);
        let scores = op.Unsqueeze(scores, zero);
        let n = dim_size(op, dets, 0);
        let iou = op.scalar(DType::Float, iou_threshold);
        let selected = op.NonMaxSuppression(boxes, scores, Some(n), Some(iou), None).center_point_box(0).out();
        let column = op.scalar_i64(2);
        Ok(op.Gather(selected, column).axis(1).out())
    }

    /// torchvision::roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height,
    ///     SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor
    #[target("torchvision::roi_align")]
    fn roi_align(
        op,
        input: Tensor,
        rois: Tensor,
        spatial_scale: f64,
        pooled_height: SymInt,
        pooled_width: SymInt,
        sampling_ratio: i64,
        aligned: bool,
    ) -> OpResult<Value> {
        let pooled = pooled_size(pooled_height, pooled_width, "roi_align")?;
        roi_align_of(op, input, rois, spatial_scale, pooled, sampling_ratio, aligned)
    }

    /// torchvision::roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height,
    ///     SymInt pooled_width) -> (Tensor, Tensor)
    #[target("torchvision::roi_pool")]
    fn roi_pool(
        op,
        input: Tensor,
        rois: Tensor,
        spatial_scale: f64,
        pooled_height: SymInt,
        pooled_width: SymInt,
    ) -> OpResult<Vec<Option<Value>>> {
        // MaxRoiPool is Caffe's ROI pooling, as torchvision's: the same rounding of the region
        // to input pixels. The argmax (for the backward pass) has no ONNX counterpart.
        let (h, w) = pooled_size(pooled_height, pooled_width, "roi_pool")?;
        let t = float_result_dtype(op, input)?;
        let x = cast(op, input, t);
        let rois = cast(op, rois, t);
        let y = op.MaxRoiPool(x, rois).pooled_shape(&[h, w]).spatial_scale(spatial_scale as f32).out();
        Ok(vec![Some(y), None])
    }

    /// torchvision::ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height,
    ///     SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)
    #[target("torchvision::ps_roi_align")]
    fn ps_roi_align(
        op,
        input: Tensor,
        rois: Tensor,
        spatial_scale: f64,
        pooled_height: SymInt,
        pooled_width: SymInt,
        sampling_ratio: i64,
    ) -> OpResult<Vec<Option<Value>>> {
        // Position-sensitive: output channel c at bin (i, j) averages input channel
        // (c * ph + i) * pw + j. RoiAlign pools every channel at every bin (torchvision's
        // ps_roi_align samples half-pixel aligned), then a one-hot mask keeps each bin's channel.
        let (h, w) = pooled_size(pooled_height, pooled_width, "ps_roi_align")?;
        let Some(channels) = op.shape(input).and_then(|s| s.get(1).cloned()) else {
            bail!("ps_roi_align needs the input's rank");
        };
        let Dim::Fixed(c) = channels else { bail!("ps_roi_align needs a static channel count") };
        let Some(bins) = h.checked_mul(w) else { bail!("ps_roi_align: {h}x{w} bins") };
        constant_elements(op, "ps_roi_align's bin mask", &[bins, h, w])?;
        if c % bins != 0 {
            bail!("ps_roi_align: {c} channels are not a multiple of the {bins} bins");
        }
        let all = roi_align_of(op, input, rois, spatial_scale, (h, w), sampling_ratio, true)?;
        let t = op.dtype(all).unwrap_or(DType::Float);
        let shape = op.const_i64s(&[-1, c / bins, bins, h, w]);
        let grouped = op.Reshape(all, shape).out();
        let one_hot: Vec<f64> =
            (0..bins).flat_map(|b| (0..bins).map(move |k| if b == k { 1.0 } else { 0.0 })).collect();
        let Some(mask) = TensorData::from_f64_as(t, vec![bins, h, w], &one_hot) else {
            bail!("ps_roi_align of {t:?} is not supported")
        };
        let mask = op.constant_tensor(mask);
        let picked = op.Mul(grouped, mask);
        let axis = op.const_i64s(&[2]);
        Ok(vec![Some(op.ReduceSum(picked, Some(axis)).keepdims(0).out()), None])
    }
}
