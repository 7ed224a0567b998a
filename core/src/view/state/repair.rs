//! docs/state-views.md, "Damaged containers (human modes only)" malformed containers: which containers a view reads as empty, and the
//! warnings that say so. Nothing is mutated: the renderers read a container through
//! [`read_container`] and collect what was repaired.

use serde_json::{Map, Value};

use crate::text::{printable_str, shell_quote, split_at_chars, UNRENDERABLE};

/// Cap (code points) of an identifier inside these warnings; `...` marks a cut.
pub const WARNING_IDENT_CAP: usize = 128;

/// The rendered value containers, in the fixed order the warning names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Container {
    Outputs,
    SkippedOutputs,
    Attributes,
    Properties,
}

impl Container {
    pub fn name(self) -> &'static str {
        match self {
            Container::Outputs => "outputs",
            Container::SkippedOutputs => "skippedOutputs",
            Container::Attributes => "attributes",
            Container::Properties => "properties",
        }
    }
}

/// How a view reads one container.
#[derive(Debug, Clone, Copy)]
pub enum ContainerRead<'a> {
    /// A JSON object: render its entries.
    Map(&'a Map<String, Value>),
    /// Absent or `null`: renders as empty, not reported.
    Empty,
    /// Any other JSON type: renders as empty and is reported.
    Repaired,
}

impl<'a> ContainerRead<'a> {
    /// The entries to render (none unless a map).
    pub fn map(self) -> Option<&'a Map<String, Value>> {
        match self {
            ContainerRead::Map(m) => Some(m),
            _ => None,
        }
    }
    pub fn is_repaired(self) -> bool {
        matches!(self, ContainerRead::Repaired)
    }
}

/// Classifies a container value (absent/`null` → empty and unreported).
pub fn read_container(v: Option<&Value>) -> ContainerRead<'_> {
    match v {
        None | Some(Value::Null) => ContainerRead::Empty,
        Some(Value::Object(m)) => ContainerRead::Map(m),
        Some(_) => ContainerRead::Repaired,
    }
}

/// The `resources` bag: a map, or `None` when it is anything else (absent and `null`
/// included), which the views read as empty and report.
pub fn resources_bag(record: &Map<String, Value>) -> Option<&Map<String, Value>> {
    match record.get("resources") {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// An identifier inside these warnings: printable (docs/state-views.md, "Printable (stack names and regions in diagnostics)"), capped at
/// [`WARNING_IDENT_CAP`] code points with `...` when cut, `<unrenderable>` when empty,
/// then shell-quoted only when it needs it.
pub fn warning_ident(raw: &str) -> String {
    let clean = printable_str(raw);
    let shown = if clean.is_empty() {
        UNRENDERABLE.to_string()
    } else if clean.chars().count() > WARNING_IDENT_CAP {
        format!("{}...", split_at_chars(&clean, WARNING_IDENT_CAP).0)
    } else {
        clean
    };
    shell_quote(&shown)
}

fn inspect_command(stack: &str, region: &str) -> String {
    format!("cdkd-flow state show {stack} --stack-region {region} --json")
}

/// docs/state-views.md, "Damaged containers (human modes only)" warning for a record whose `resources` is not a plain JSON object.
pub fn malformed_resources_warning(stack: &str, region: &str) -> String {
    let (s, r) = (warning_ident(stack), warning_ident(region));
    format!(
        "State for {s} ({r}) has no readable 'resources' map — the record is malformed or \
         truncated. Both 'cdkd deploy' and 'cdkd destroy' REFUSE such a record rather than \
         acting on it: they read the same map, an unreadable one is indistinguishable from an \
         empty stack, and acting on that reading would make a deploy re-CREATE every resource \
         and a destroy delete none of them. Continuing with an EMPTY resource set: this \
         command's output describes zero resources, which is not the same as the stack having \
         none. Inspect it with: {}",
        inspect_command(&s, &r)
    )
}

/// docs/state-views.md, "Damaged containers (human modes only)" warning naming the repaired value containers, in the fixed order.
pub fn malformed_containers_warning(stack: &str, region: &str, repaired: &[Container]) -> String {
    let (s, r) = (warning_ident(stack), warning_ident(region));
    let mut names: Vec<Container> = repaired.to_vec();
    names.sort();
    names.dedup();
    let names = names
        .iter()
        .map(|c| format!("'{}'", c.name()))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "State for {s} ({r}) has a non-object {names} — the record is malformed or truncated. \
         Rendering one as a map would invent a row per character or element. Continuing with \
         it EMPTY: this view shows no rows there, which is not the same as the record holding \
         none. A per-resource container is named once however many resources hold one. See the \
         stored values with: {}",
        inspect_command(&s, &r)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warning_ident_is_bare_for_plain_names_and_quoted_for_nested() {
        assert_eq!(warning_ident("App"), "App");
        assert_eq!(warning_ident("Root~Child"), "'Root~Child'");
        assert_eq!(warning_ident("\u{1b}"), "'<unrenderable>'");
        let long = "a".repeat(200);
        assert_eq!(warning_ident(&long), format!("{}...", "a".repeat(128)));
    }

    #[test]
    fn containers_warning_names_in_fixed_order_once() {
        let w = malformed_containers_warning(
            "App",
            "us-east-1",
            &[
                Container::Properties,
                Container::Outputs,
                Container::Properties,
            ],
        );
        assert!(
            w.starts_with("State for App (us-east-1) has a non-object 'outputs', 'properties' — ")
        );
        assert!(w.ends_with("cdkd-flow state show App --stack-region us-east-1 --json"));
    }
}
