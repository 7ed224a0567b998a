//! One template body: JSON or YAML (told apart by the content), checked to be a template.

use std::path::Path;

use cdkd_core::export::template::{child_template_path, AbsoluteAssetPath, Template};
use serde_json::Value;

use super::error::{ParseFailure, SourceError};
use super::types::TemplateFormat;
use super::yaml::parse_yaml;

/// Reads and parses one template file (JSON or YAML, sniffed from the content).
pub(super) fn read_template(
    stack: &str,
    path: &Path,
) -> Result<(Value, TemplateFormat), SourceError> {
    let bytes = std::fs::read(path).map_err(|e| SourceError::ReadTemplate {
        stack: stack.to_string(),
        path: path.to_path_buf(),
        cause: e.to_string(),
    })?;
    parse_template(&bytes).map_err(|p| p.into_error(stack, path))
}

/// Parses a template body: JSON when it starts with `{` or `[`, YAML otherwise. A leading
/// UTF-8 byte-order mark is skipped.
fn parse_template(bytes: &[u8]) -> Result<(Value, TemplateFormat), ParseFailure> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ParseFailure::NotUtf8(format!("it is not UTF-8 text ({e})")))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with(['{', '[']) {
        return cdkd_core::json::parse_json_unique_keys(text.as_bytes())
            .map(|v| (v, TemplateFormat::Json))
            .map_err(ParseFailure::Json);
    }
    parse_yaml(text).map(|v| (v, TemplateFormat::Yaml))
}

/// The template's nested-stack resources, as read by core's template model.
pub(super) struct NestedRow {
    pub(super) logical_id: String,
    pub(super) asset_path: Result<Option<String>, AbsoluteAssetPath>,
}

/// Checks that `value` is a template (a JSON object with an object `Resources`) and lists
/// its nested-stack resources.
pub(super) fn checked(
    stack: &str,
    path: &Path,
    value: Value,
) -> Result<(Value, Vec<NestedRow>), SourceError> {
    let template = Template::from_value(stack, value).map_err(|e| SourceError::NotATemplate {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let nested = template
        .nested_stacks()
        .iter()
        .map(|r| NestedRow {
            logical_id: r.logical_id.to_string(),
            asset_path: child_template_path(r).map(|p| p.map(str::to_string)),
        })
        .collect();
    Ok((Value::Object(template.body), nested))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_source_statement_108_a_duplicate_key_is_refused_naming_the_key_and_its_path_in_json_and_yaml(
    ) {
        let json = "{\"Resources\": {\"A\": {\"Type\": \"AWS::SNS::Topic\"}},\n \"Resources\": {}}";
        match parse_template(json.as_bytes()) {
            Err(ParseFailure::Json(m)) => assert_eq!(
                m,
                "duplicate key \"Resources\" in the document at line 2 column 12"
            ),
            other => panic!("{other:?}"),
        }
        let yaml = "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Ref Name\n      BucketName: other\n";
        match parse_template(yaml.as_bytes()) {
            Err(ParseFailure::Yaml { message, line, .. }) => {
                assert!(
                    message.starts_with(
                        "duplicate key \"BucketName\" in Resources.B.Properties at line 6 column"
                    ),
                    "{message}"
                );
                // The line of the repeat, as JSON's.
                assert_eq!(line, Some(6), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // Inside a short-form tag too.
        let tagged = "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !If\n        - C\n        - {a: 1, a: 2}\n        - x\n";
        match parse_template(tagged.as_bytes()) {
            Err(ParseFailure::Yaml { message, .. }) => assert!(
                message.starts_with(
                    "duplicate key \"a\" in Resources.B.Properties.BucketName[1] at line"
                ),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        // The same key in two mappings is no duplicate.
        let fine = "Resources:\n  A:\n    Type: T\n  B:\n    Type: T\n";
        assert!(parse_template(fine.as_bytes()).is_ok());
    }
}
