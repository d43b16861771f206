//! What to say when a name given on the command line matches nothing: the
//! names that exist, closest to the one given first, so a typo shows its fix.

/// At most this many names are listed.
const SHOWN: usize = 12;

/// `a, b, c` (closest to `wanted` first), with `and N more` past [`SHOWN`].
pub fn closest_first<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    names.sort_by(|a, b| strsim::jaro_winkler(wanted, b).total_cmp(&strsim::jaro_winkler(wanted, a)));
    let rest = names.len().saturating_sub(SHOWN);
    let mut listed = names.into_iter().take(SHOWN).collect::<Vec<_>>().join(", ");
    if rest > 0 {
        listed.push_str(&format!(" and {rest} more"));
    }
    if listed.is_empty() {
        listed.push_str("none");
    }
    listed
}

#[cfg(test)]
mod tests {
    use super::closest_first;

    #[test]
    fn the_closest_name_comes_first() {
        let names = ["jit__normal", "jit_train_step", "jit_multiply"];
        assert_eq!(closest_first("jit_train_stp", names), "jit_train_step, jit_multiply, jit__normal");
        assert_eq!(closest_first("x", []), "none");
    }
}
