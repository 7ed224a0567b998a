//! `AWS::IAM::Policy` (an inline policy): delete the policy from every role, user and
//! group the record names (docs/destroy.md, "SDK deleters"). The physical id is the policy name; the legacy
//! form `<name>:<role>` names one more role. NoSuchEntity for one principal is fine.

use async_trait::async_trait;

use crate::error::DeleteError;
use crate::guard;
use crate::progress::DeleteProgress;
use crate::read::props::{policy_document, Props};
use crate::read::{found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::sdk::iam_common::Principal;
use crate::{Deleter, SdkDeleter};
use serde_json::Value;

pub struct IamPolicyDeleter {
    iam: aws_sdk_iam::Client,
}

impl IamPolicyDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        IamPolicyDeleter { iam }
    }
}

/// What the record says the policy is attached to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InlinePolicyTarget {
    pub policy_name: String,
    pub roles: Vec<String>,
    pub users: Vec<String>,
    pub groups: Vec<String>,
}

impl InlinePolicyTarget {
    /// Every role, then every user, then every group the policy is on.
    fn principals(&self) -> impl Iterator<Item = Principal<'_>> {
        let roles = self.roles.iter().map(|n| Principal::Role(n));
        let users = self.users.iter().map(|n| Principal::User(n));
        let groups = self.groups.iter().map(|n| Principal::Group(n));
        roles.chain(users).chain(groups)
    }
}

/// A principal given as a name or as an ARN (`arn:aws:iam::1:role/path/name`) → the name.
fn principal_name(p: &str) -> String {
    if p.starts_with("arn:") {
        p.rsplit('/').next().unwrap_or(p).to_owned()
    } else {
        p.to_owned()
    }
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !item.is_empty() && !list.contains(&item) {
        list.push(item);
    }
}

/// Reads the policy name and principals from the physical id and the properties.
/// `None` when the record lacks the name or names no principal.
pub fn inline_policy_target(req: &DeleteRequest) -> Option<InlinePolicyTarget> {
    target_of(&req.physical_id, &req.properties)
}

/// [`inline_policy_target`] from a record's physical id and `properties`.
fn target_of(physical_id: &str, properties: &Value) -> Option<InlinePolicyTarget> {
    let strs = |key: &str| -> Vec<String> {
        match properties.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        }
    };
    let (name, legacy_role) = match physical_id.split_once(':') {
        Some((name, role)) => (name.to_owned(), Some(role.to_owned())),
        None => (physical_id.to_owned(), None),
    };
    let name = if name.is_empty() {
        properties.get("PolicyName")?.as_str()?.to_owned()
    } else {
        name
    };
    let mut t = InlinePolicyTarget {
        policy_name: name,
        ..Default::default()
    };
    if let Some(r) = legacy_role {
        push_unique(&mut t.roles, principal_name(&r));
    }
    for r in strs("Roles") {
        push_unique(&mut t.roles, principal_name(&r));
    }
    for u in strs("Users") {
        push_unique(&mut t.users, principal_name(&u));
    }
    for g in strs("Groups") {
        push_unique(&mut t.groups, principal_name(&g));
    }
    if t.roles.is_empty() && t.users.is_empty() && t.groups.is_empty() {
        return None;
    }
    Some(t)
}

impl SdkDeleter for IamPolicyDeleter {
    const TYPES: &'static [&'static str] = &["AWS::IAM::Policy"];
}

#[async_trait]
impl Deleter for IamPolicyDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let Some(target) = inline_policy_target(req) else {
            return Err(DeleteError::skipped(
                req,
                "the record names no policy name or no role, user or group to delete the inline policy from",
            ));
        };
        let name = target.policy_name.as_str();
        let iam = &self.iam;
        let mut deleted = 0usize;
        let mut missing = 0usize;
        for principal in target.principals() {
            match principal.delete_inline_policy(iam, name).await {
                Ok(()) => deleted += 1,
                Err(info) if info.code_is(&["NoSuchEntity"]) => missing += 1,
                Err(info) => {
                    let action = format!("Delete{}Policy on {principal}", principal.kind());
                    return Err(DeleteError::from_aws(req, &action, &info));
                }
            }
        }
        if deleted == 0 && missing > 0 {
            return guard::not_found(
                req,
                iam.config().region().map(|r| r.as_ref()),
                true,
                &format!("IAM says inline policy {name} is on none of its {missing} principal(s)"),
            );
        }
        Ok(DeleteProgress::Done)
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): the policy document from the first principal that has
// it, and the principals of the record that still have it.

impl SdkReader for IamPolicyDeleter {
    const READS: &'static [&'static str] = &["AWS::IAM::Policy"];
}

#[async_trait]
impl Reader for IamPolicyDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some(target) = target_of(&req.physical_id, &req.properties) else {
            return Err(ReadError::Unsupported(
                "the record names no policy name or no role, user or group".into(),
            ));
        };
        let name = target.policy_name.as_str();
        let iam = &self.iam;
        let mut document: Option<Value> = None;
        let (mut roles, mut users, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        for r in &target.roles {
            let sent = iam
                .get_role_policy()
                .role_name(r)
                .policy_name(name)
                .send()
                .await;
            if let Some(out) = found("GetRolePolicy", &["NoSuchEntity"], sent)? {
                document.get_or_insert_with(|| policy_document(out.policy_document()));
                roles.push(r.clone());
            }
        }
        for u in &target.users {
            let sent = iam
                .get_user_policy()
                .user_name(u)
                .policy_name(name)
                .send()
                .await;
            if let Some(out) = found("GetUserPolicy", &["NoSuchEntity"], sent)? {
                document.get_or_insert_with(|| policy_document(out.policy_document()));
                users.push(u.clone());
            }
        }
        for g in &target.groups {
            let sent = iam
                .get_group_policy()
                .group_name(g)
                .policy_name(name)
                .send()
                .await;
            if let Some(out) = found("GetGroupPolicy", &["NoSuchEntity"], sent)? {
                document.get_or_insert_with(|| policy_document(out.policy_document()));
                groups.push(g.clone());
            }
        }
        let Some(document) = document else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.set("PolicyName", name);
        p.set("PolicyDocument", document);
        p.list("Roles", roles)
            .list("Users", users)
            .list("Groups", groups);
        Ok(Some(p.build()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RunContext;
    use serde_json::json;

    fn req(physical_id: &str, properties: serde_json::Value) -> DeleteRequest {
        DeleteRequest {
            logical_id: "P".into(),
            resource_type: "AWS::IAM::Policy".into(),
            physical_id: physical_id.into(),
            properties,
            attributes: serde_json::Value::Null,
            provisioned_by: None,
            region: "us-east-1".into(),
            attempt: 0,
            run: RunContext {
                run_id: "r".into(),
                stack: "S".into(),
                state_bucket: "b".into(),
                state_prefix: "cdkd".into(),
            },
            options: Default::default(),
        }
    }

    #[test]
    fn inline_policy_physical_id_is_the_policy_name_and_principals_come_from_properties() {
        let t = inline_policy_target(&req(
            "Pol",
            json!({"Roles": ["r1", "arn:aws:iam::1:role/path/r2"], "Users": ["u"], "Groups": ["g"]}),
        ))
        .unwrap();
        assert_eq!(t.policy_name, "Pol");
        assert_eq!(t.roles, vec!["r1", "r2"]);
        assert_eq!(t.users, vec!["u"]);
        assert_eq!(t.groups, vec!["g"]);
    }

    #[test]
    fn inline_policy_legacy_name_colon_role_id_names_that_role() {
        let t = inline_policy_target(&req("Pol:MyRole", json!({}))).unwrap();
        assert_eq!(t.policy_name, "Pol");
        assert_eq!(t.roles, vec!["MyRole"]);
    }

    #[test]
    fn inline_policy_without_principals_is_skipped() {
        assert_eq!(
            inline_policy_target(&req("Pol", json!({"PolicyName": "Pol"}))),
            None
        );
        assert_eq!(
            inline_policy_target(&req("Pol", serde_json::Value::Null)),
            None
        );
    }
}
