//! Resources the template leaves out (docs/export.md, "Rows the template leaves out"): rows of the record that no
//! template resource declares. The export does not import them and deletes the record,
//! so they keep running in AWS, owned by nothing. The plan lists them, a real run
//! refuses them unless `--leave-unmanaged`, and the report says how to bring each back
//! under management.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::identifier;
use super::plain::is_plain;
use super::records::{rows, Row};
use super::registry::TypeFacts;
use super::sg::SgLookup;
use super::template::Template;
use crate::destroy::decide::NO_OP_TYPES;
use crate::state::StateRecord;

/// The option that lets a real run leave them (docs/cli.md `export`).
pub const FLAG: &str = "--leave-unmanaged";

/// One row the template leaves out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnmanagedRow {
    pub logical_id: String,
    /// The recorded type; empty when the row records none.
    #[serde(rename = "type")]
    pub resource_type: String,
    pub physical_id: String,
    /// CloudFormation's identifier for it, when the export can resolve it (what an
    /// IMPORT change set names it by); empty otherwise.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub identifier: Map<String, Value>,
}

/// The rows of `record` that are left out: an object row with a physical id whose
/// logical id no template resource declares, of a type that is a resource of its own
/// (not one of the no-op types, which AWS deletes with their parent or manages itself).
/// In the record's order.
pub fn left_out<'a>(template: &Template, record: &'a StateRecord) -> Vec<(&'a str, Row<'a>)> {
    let Some(all) = rows(record) else {
        return Vec::new();
    };
    let declared: Vec<&str> = template.resources().iter().map(|r| r.logical_id).collect();
    crate::json::ordered_entries(all)
        .into_iter()
        .filter(|(id, _)| !declared.contains(&id.as_str()))
        .filter_map(|(id, v)| {
            let row = Row {
                body: v.as_object()?,
            };
            row.physical_id()?;
            if row
                .resource_type()
                .is_some_and(|t| NO_OP_TYPES.contains(&t))
            {
                return None;
            }
            Some((id.as_str(), row))
        })
        .collect()
}

/// The types whose identifier the plan resolves for the rows left out.
pub fn types(template: &Template, record: &StateRecord) -> Vec<String> {
    left_out(template, record)
        .into_iter()
        .filter_map(|(_, r)| r.resource_type().map(str::to_string))
        .collect()
}

/// The plan's list of rows left out, with the identifier where the registry's answer
/// (or the fallback table) resolves it.
pub fn plan_rows(
    template: &Template,
    record: &StateRecord,
    facts: &BTreeMap<String, TypeFacts>,
    sg: &BTreeMap<String, SgLookup>,
) -> Vec<UnmanagedRow> {
    left_out(template, record)
        .into_iter()
        .map(|(id, row)| {
            let rt = row.resource_type().unwrap_or_default();
            let identifier = if rt.is_empty() {
                Map::new()
            } else {
                identifier::resolve(id, rt, facts.get(rt), &row, sg)
                    .map(|r| r.identifier)
                    .unwrap_or_default()
            };
            UnmanagedRow {
                logical_id: id.to_string(),
                resource_type: rt.to_string(),
                physical_id: row.physical_id().unwrap_or_default().to_string(),
                identifier,
            }
        })
        .collect()
}

/// The report's entry for one row whose record the run deleted: what it is and how to
/// bring it back under management.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnmanagedReport {
    pub stack: String,
    pub logical_id: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    pub physical_id: String,
    /// How to bring it back under management.
    pub how: HowToManage,
    /// The IMPORT change set that does it, when every value in it is plain and its
    /// identifier is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// How to bring a row back under management: declare it in the app and import it into
/// CloudFormation stack `cfn`, by the IMPORT change set printed with it
/// (`with_command`) or one that names its identifier (the type's primary identifier,
/// when a type is recorded). Its words are the report view's
/// (`core::view::export_report`); `report.json` keeps them (`how`), and read back they
/// are `Recorded`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum HowToManage {
    Import {
        logical_id: String,
        cfn: String,
        resource_type: String,
        with_command: bool,
    },
    Recorded(String),
}

impl Default for HowToManage {
    fn default() -> Self {
        HowToManage::Recorded(String::new())
    }
}

impl From<String> for HowToManage {
    fn from(words: String) -> Self {
        HowToManage::Recorded(words)
    }
}

/// The report's entry for `r`, left out of stack `stack`, migrated into the CloudFormation
/// stack `cfn` in `region`. Nothing manages it now: only a CloudFormation import of it
/// into a stack makes it managed again (a deploy that declared it would try to create it).
pub fn report_entry(stack: &str, cfn: &str, region: &str, r: &UnmanagedRow) -> UnmanagedReport {
    let values_plain = r
        .identifier
        .iter()
        .all(|(k, v)| is_plain(k) && v.as_str().is_some_and(is_plain));
    let command = (!r.identifier.is_empty()
        && values_plain
        && [cfn, region, r.logical_id.as_str(), r.resource_type.as_str()]
            .iter()
            .all(|v| is_plain(v)))
    .then(|| {
        let entry = serde_json::json!([{
            "ResourceType": r.resource_type,
            "LogicalResourceId": r.logical_id,
            "ResourceIdentifier": r.identifier,
        }]);
        let name: String = r
            .logical_id
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(100)
            .collect();
        format!(
            "aws cloudformation create-change-set --stack-name {cfn} --region {region} --change-set-name cdkd-import-{name} --change-set-type IMPORT --resources-to-import '{entry}' --template-body file://template.json --capabilities CAPABILITY_IAM CAPABILITY_NAMED_IAM CAPABILITY_AUTO_EXPAND"
        )
    });
    let how = HowToManage::Import {
        logical_id: r.logical_id.clone(),
        cfn: cfn.to_string(),
        resource_type: r.resource_type.clone(),
        with_command: command.is_some(),
    };
    UnmanagedReport {
        stack: stack.to_string(),
        logical_id: r.logical_id.clone(),
        resource_type: r.resource_type.clone(),
        physical_id: r.physical_id.clone(),
        how,
        command,
    }
}
