//! XLA shapes as XLA itself prints and sizes them (`ShapeUtil::HumanStringWithLayout`
//! and `ShapeUtil::ByteSizeOf` with the layout reset), so shape strings and
//! unpadded sizes match XProf's to the character and the byte.

use std::fmt::Write;

use super::proto::xla::{LayoutProto, ShapeProto};

const TUPLE: i32 = 13;
const OPAQUE: i32 = 14;
const TOKEN: i32 = 17;
/// `Shape::kUnboundedSize`: a dynamic dimension with no bound, printed `?`.
const UNBOUNDED: i64 = i64::MIN;
/// `Tile::kCombineDimension`, printed `*`.
const COMBINE_DIMENSION: i64 = i64::MIN;
const POINTER_SIZE: i64 = 8;

fn type_name(element_type: i32) -> &'static str {
    match element_type {
        1 => "pred",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        12 => "f64",
        13 => "tuple",
        14 => "opaque",
        15 => "c64",
        16 => "bf16",
        17 => "token",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        21 => "s4",
        22 => "u4",
        23 => "f8e4m3b11fnuz",
        24 => "f8e5m2fnuz",
        25 => "f8e4m3fnuz",
        26 => "s2",
        27 => "u2",
        28 => "f8e4m3",
        29 => "f8e3m4",
        30 => "s1",
        31 => "u1",
        32 => "f4e2m1fn",
        33 => "f8e8m0fnu",
        34 => "buffer",
        _ => "invalid",
    }
}

/// Bytes per element, rounding sub-byte types up to one byte as XLA's
/// `ByteSizeOfPrimitiveType` does.
fn byte_width(element_type: i32) -> i64 {
    match element_type {
        1 | 2 | 6 | 19..=33 => 1,
        3 | 7 | 10 | 16 => 2,
        4 | 8 | 11 => 4,
        5 | 9 | 12 | 15 => 8,
        18 => 16,
        _ => 0,
    }
}

fn is_integral(element_type: i32) -> bool {
    matches!(element_type, 2..=9 | 21 | 22 | 26 | 27 | 30 | 31)
}

/// The sub-shape XProf attributes to a logical buffer: only the *last*
/// element of the shape index is applied, as a tuple child (XProf's
/// historical simplification, kept for parity).
pub fn resolve_shape_index<'a>(shape: &'a ShapeProto, shape_index: &[i64]) -> &'a ShapeProto {
    shape_index.last().and_then(|&i| usize::try_from(i).ok()).and_then(|i| shape.tuple_shapes.get(i)).unwrap_or(shape)
}

pub fn is_tuple(shape: &ShapeProto) -> bool {
    shape.element_type == TUPLE
}

/// Dense byte size with the layout reset to the default: dims × element
/// bytes; a tuple is one pointer per element; a token is empty.
pub fn unpadded_size(shape: &ShapeProto) -> i64 {
    match shape.element_type {
        TUPLE => POINTER_SIZE.saturating_mul(shape.tuple_shapes.len() as i64),
        TOKEN => 0,
        OPAQUE => POINTER_SIZE,
        element_type => shape
            .dimensions
            .iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d.max(0)))
            .and_then(|n| n.checked_mul(byte_width(element_type)))
            .unwrap_or(i64::MAX),
    }
}

/// `f32[1024,1024]{1,0}`, `bf16[8,128]{1,0:T(8,128)(2,1)}`, `(f32[2]{0}, s32[])`.
pub fn human_string_with_layout(shape: &ShapeProto) -> String {
    let mut out = String::new();
    write_shape(&mut out, shape, 0);
    out
}

/// Shapes nest; a malicious proto could nest them deeply, so printing stops
/// descending at a fixed depth.
const MAX_DEPTH: usize = 64;

fn write_shape(out: &mut String, shape: &ShapeProto, depth: usize) {
    if depth > MAX_DEPTH {
        out.push_str("...");
        return;
    }
    if shape.element_type == TUPLE {
        out.push('(');
        for (i, element) in shape.tuple_shapes.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_shape(out, element, depth + 1);
        }
        out.push(')');
        return;
    }
    out.push_str(type_name(shape.element_type));
    out.push('[');
    for (i, &dim) in shape.dimensions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if shape.is_dynamic_dimension.get(i).copied().unwrap_or(false) {
            if dim == UNBOUNDED {
                out.push('?');
            } else {
                let _ = write!(out, "<={dim}");
            }
        } else {
            let _ = write!(out, "{dim}");
        }
    }
    out.push(']');
    if matches!(shape.element_type, TOKEN | OPAQUE) {
        return;
    }
    if let Some(layout) = &shape.layout {
        let printed = layout_string(layout, depth);
        // XLA does not print an empty `{}` layout after a scalar.
        if !(shape.dimensions.is_empty() && printed == "{}") {
            out.push_str(&printed);
        }
    }
}

fn layout_string(layout: &LayoutProto, depth: usize) -> String {
    let mut out = String::from("{");
    for (i, d) in layout.minor_to_major.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{d}");
    }
    let mut items = String::new();
    if !layout.dim_level_types.is_empty() {
        items.push_str("D(");
        for (i, level) in layout.dim_level_types.iter().enumerate() {
            if i > 0 {
                items.push(',');
            }
            items.push(match level {
                1 => 'C',
                2 => 'S',
                3 => 'H',
                _ => 'D',
            });
        }
        items.push(')');
    }
    if !layout.tiles.is_empty() {
        items.push('T');
        for tile in &layout.tiles {
            items.push('(');
            for (i, &d) in tile.dimensions.iter().enumerate() {
                if i > 0 {
                    items.push(',');
                }
                if d == COMBINE_DIMENSION {
                    items.push('*');
                } else {
                    let _ = write!(items, "{d}");
                }
            }
            items.push(')');
        }
    }
    if layout.tail_padding_alignment_in_elements > 1 {
        let _ = write!(items, "L({})", layout.tail_padding_alignment_in_elements);
    }
    if layout.index_primitive_type != 0 {
        let name =
            if is_integral(layout.index_primitive_type) { type_name(layout.index_primitive_type) } else { "invalid" };
        let _ = write!(items, "#({name})");
    }
    if layout.pointer_primitive_type != 0 {
        let name = if is_integral(layout.pointer_primitive_type) {
            type_name(layout.pointer_primitive_type)
        } else {
            "invalid"
        };
        let _ = write!(items, "*({name})");
    }
    if layout.element_size_in_bits != 0 {
        let _ = write!(items, "E({})", layout.element_size_in_bits);
    }
    if layout.memory_space != 0 {
        let _ = write!(items, "S({})", layout.memory_space);
    }
    if !layout.split_configs.is_empty() {
        items.push_str("SC");
        for split in &layout.split_configs {
            let _ = write!(items, "({}:", split.dimension);
            for (i, index) in split.split_indices.iter().enumerate() {
                if i > 0 {
                    items.push(',');
                }
                let _ = write!(items, "{index}");
            }
            items.push(')');
        }
    }
    if let Some(physical) = &layout.physical_shape {
        items.push_str("P(");
        write_shape(&mut items, physical, depth + 1);
        items.push(')');
    }
    if layout.dynamic_shape_metadata_prefix_bytes > 0 {
        let _ = write!(items, "M({})", layout.dynamic_shape_metadata_prefix_bytes);
    }
    if !items.is_empty() {
        out.push(':');
        out.push_str(&items);
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::proto::xla::TileProto;

    fn array(element_type: i32, dims: &[i64], layout: Option<LayoutProto>) -> ShapeProto {
        ShapeProto { element_type, dimensions: dims.to_vec(), layout: layout.map(Box::new), ..Default::default() }
    }

    fn layout(minor_to_major: &[i64]) -> LayoutProto {
        LayoutProto { minor_to_major: minor_to_major.to_vec(), ..Default::default() }
    }

    #[test]
    fn prints_like_xla() {
        assert_eq!(human_string_with_layout(&array(11, &[1024, 1024], Some(layout(&[1, 0])))), "f32[1024,1024]{1,0}");
        let tiled = LayoutProto {
            tiles: vec![TileProto { dimensions: vec![8, 128] }, TileProto { dimensions: vec![2, 1] }],
            ..layout(&[1, 0])
        };
        assert_eq!(human_string_with_layout(&array(16, &[8, 128], Some(tiled))), "bf16[8,128]{1,0:T(8,128)(2,1)}");
        let host =
            LayoutProto { memory_space: 5, tiles: vec![TileProto { dimensions: vec![2, 128] }], ..layout(&[2, 1, 0]) };
        assert_eq!(human_string_with_layout(&array(11, &[32, 1, 1], Some(host))), "f32[32,1,1]{2,1,0:T(2,128)S(5)}");
        assert_eq!(human_string_with_layout(&array(11, &[], Some(layout(&[])))), "f32[]");
        let tuple = ShapeProto {
            element_type: TUPLE,
            tuple_shapes: vec![array(11, &[2], Some(layout(&[0]))), array(4, &[], Some(layout(&[])))],
            ..Default::default()
        };
        assert_eq!(human_string_with_layout(&tuple), "(f32[2]{0}, s32[])");
    }

    #[test]
    fn unpadded_size_ignores_layout_and_counts_tuple_pointers() {
        let tiled = LayoutProto { tiles: vec![TileProto { dimensions: vec![8, 128] }], ..layout(&[1, 0]) };
        assert_eq!(unpadded_size(&array(11, &[129, 1024], Some(tiled))), 129 * 1024 * 4);
        let tuple =
            ShapeProto { element_type: TUPLE, tuple_shapes: vec![array(11, &[2], None); 3], ..Default::default() };
        assert_eq!(unpadded_size(&tuple), 24);
        assert_eq!(unpadded_size(&array(TOKEN, &[], None)), 0);
        assert_eq!(unpadded_size(&array(11, &[i64::MAX, 4], None)), i64::MAX);
    }

    #[test]
    fn shape_index_uses_only_its_last_element() {
        let inner = array(11, &[3], None);
        let tuple = ShapeProto {
            element_type: TUPLE,
            tuple_shapes: vec![array(4, &[], None), inner.clone()],
            ..Default::default()
        };
        assert_eq!(resolve_shape_index(&tuple, &[7, 1]), &inner);
        assert_eq!(resolve_shape_index(&tuple, &[9]), &tuple);
    }
}
