//! Id → position lookups for ids read from files (instruction and buffer
//! ids). XLA numbers them almost sequentially, so a dense table indexed by
//! id is both smaller and far faster than a hash map on modules with
//! millions of entries (a hash map's random probes miss the cache at every
//! lookup); ids spread too thinly for a table fall back to a hash map.

use std::collections::HashMap;

#[derive(Debug, Clone)]
pub enum IdIndex {
    Dense { first: i64, positions: Vec<u32> },
    Sparse(HashMap<i64, u32>),
}

const ABSENT: u32 = u32::MAX;

impl IdIndex {
    /// Indexes `ids` by their position in the iterator; a repeated id keeps
    /// its last position.
    pub fn new(ids: &[i64]) -> Self {
        let (Some(&min), Some(&max)) = (ids.iter().min(), ids.iter().max()) else {
            return IdIndex::Sparse(HashMap::new());
        };
        let span = max.checked_sub(min).and_then(|s| usize::try_from(s).ok()).and_then(|s| s.checked_add(1));
        // A table at most four times the number of ids (plus slack for small inputs).
        match span.filter(|&span| span <= ids.len().saturating_mul(4).saturating_add(1024)) {
            Some(span) => {
                let mut positions = vec![ABSENT; span];
                for (position, &id) in ids.iter().enumerate() {
                    if let Some(slot) = usize::try_from(id - min).ok().and_then(|i| positions.get_mut(i)) {
                        *slot = u32::try_from(position).unwrap_or(ABSENT);
                    }
                }
                IdIndex::Dense { first: min, positions }
            }
            None => IdIndex::Sparse(
                ids.iter().enumerate().map(|(p, &id)| (id, u32::try_from(p).unwrap_or(ABSENT))).collect(),
            ),
        }
    }

    pub fn get(&self, id: i64) -> Option<usize> {
        let position = match self {
            IdIndex::Dense { first, positions } => {
                id.checked_sub(*first).and_then(|i| usize::try_from(i).ok()).and_then(|i| positions.get(i)).copied()
            }
            IdIndex::Sparse(map) => map.get(&id).copied(),
        }?;
        (position != ABSENT).then_some(position as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_agree() {
        let compact = IdIndex::new(&[10, 12, 11, 12]);
        assert!(matches!(compact, IdIndex::Dense { .. }));
        assert_eq!(
            [10, 11, 12, 13, 9, i64::MIN].map(|id| compact.get(id)),
            [Some(0), Some(2), Some(3), None, None, None]
        );
        let spread = IdIndex::new(&[0, 1 << 40, -5]);
        assert!(matches!(spread, IdIndex::Sparse(_)));
        assert_eq!([0, 1 << 40, -5, 7].map(|id| spread.get(id)), [Some(0), Some(1), Some(2), None]);
        let extremes = IdIndex::new(&[i64::MIN, i64::MAX]);
        assert_eq!(extremes.get(i64::MAX), Some(1));
        assert_eq!(IdIndex::new(&[]).get(0), None);
    }
}
