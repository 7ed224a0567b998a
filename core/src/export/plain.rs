//! The plain-value rule (docs/export.md, "Values printed in messages"): a physical id, a stack name or a `-c`
//! value is printed in a plan row, a failure message or a nested-stack list only when it
//! is inert on a command line, because those messages also carry commands to paste.

/// What is printed instead of a value that is not plain.
pub const NOT_SHOWN: &str = "(not shown: it is not a plain identifier)";
/// What a non-plain `-c` value prints as in the post-export `cdk` commands.
pub const CONTEXT_HOLE: &str = "'<context>'";
/// Longest plain value, in characters (the stack-name cap of the views).
pub const MAX_PLAIN_CHARS: usize = crate::text::STACK_NAME_CAP;

/// The one rule: non-empty, at most [`MAX_PLAIN_CHARS`] characters, every character in
/// `[A-Za-z0-9._/@:+=,~-]`, and neither a leading `-` (an option) nor a leading `~` (a
/// home-directory expansion). `$`, `|`, spaces, quotes, globs and every non-ASCII or
/// control character make a value not plain.
pub fn is_plain(value: &str) -> bool {
    !value.is_empty()
        && value.chars().count() <= MAX_PLAIN_CHARS
        && !value.starts_with('-')
        && !value.starts_with('~')
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._/@:+=,~-".contains(&b))
}

/// The value itself when [`is_plain`], else [`NOT_SHOWN`].
pub fn shown(value: &str) -> &str {
    if is_plain(value) {
        value
    } else {
        NOT_SHOWN
    }
}

/// A `-c` value in a printed `cdk` command: itself when plain, else [`CONTEXT_HOLE`].
pub fn context_arg(value: &str) -> &str {
    if is_plain(value) {
        value
    } else {
        CONTEXT_HOLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_rule_accepts_names_arns_and_nested_names() {
        for v in [
            "MyStack",
            "Root~Child",
            "arn:aws:lambda:us-east-1:123456789012:function:f",
            "sgr-0abc",
            "100.68.0.0/18",
            "a=b,c",
            "user@example.com",
        ] {
            assert!(is_plain(v), "{v}");
            assert_eq!(shown(v), v);
        }
    }

    #[test]
    fn plain_rule_refuses_anything_a_shell_would_read() {
        for v in [
            "",
            "-x",
            "~root",
            "a b",
            "a|b",
            "$LATEST",
            "a;b",
            "a'b",
            "a\"b",
            "a*",
            "caf\u{e9}",
            "a\u{202e}b",
        ] {
            assert!(!is_plain(v), "{v:?}");
        }
        assert!(!is_plain(&"a".repeat(MAX_PLAIN_CHARS + 1)));
        assert!(is_plain(&"a".repeat(MAX_PLAIN_CHARS)));
    }

    #[test]
    fn statement_100_a_physical_id_with_a_newline_prints_not_shown() {
        assert_eq!(shown("bucket\nrm -rf"), NOT_SHOWN);
        assert_eq!(NOT_SHOWN, "(not shown: it is not a plain identifier)");
    }

    #[test]
    fn context_value_that_is_not_plain_prints_as_the_quoted_hole() {
        assert_eq!(context_arg("prod"), "prod");
        assert_eq!(context_arg("a b"), "'<context>'");
    }
}
