//! What cdkd-flow treats as a credential when a value could be copied from one record
//! into another (docs/repairs.md, "The rewrite"): the credential-name rule, the attribute
//! classes whose cached values are never copied, and the value checks.

use serde_json::Value;

use super::dynref;
use super::MASK;

/// Why a cached attribute value is never copied into a referring record. The order of
/// the variants is the order the checks run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CredentialClass {
    /// The attribute's name passes [`is_credential_name`].
    CredentialNamedAttribute,
    /// Any attribute of a custom resource.
    CustomResourceAttribute,
    /// One of [`SECRET_VALUED_ATTRIBUTES`].
    SecretValuedAttribute,
    /// The value holds the redaction mask.
    Mask,
    /// The value holds an unresolved `{{resolve:...}}` reference.
    DynamicReference,
    /// The value holds an object key that passes [`is_credential_name`], at any depth.
    CredentialNamedField,
}

/// Attributes whose value is itself a secret, whatever their name says.
pub const SECRET_VALUED_ATTRIBUTES: &[(&str, &str)] = &[
    ("AWS::AppSync::ApiKey", "ApiKey"),
    (
        "AWS::EC2::IpamExternalResourceVerificationToken",
        "TokenValue",
    ),
    ("AWS::IVS::StreamKey", "Value"),
];

const CREDENTIAL_WORDS: &[&str] = &["secret", "password", "credential"];
const NON_SECRET_ENDINGS: &[&str] = &["arn", "id", "name", "url", "alias", "status"];

/// The credential-name rule: the name contains `secret`, `password` or `credential`
/// (any case, anywhere) and does not end with `arn`, `id`, `name`, `url`, `alias` or
/// `status` (any case). `SecretAccessKey` passes; `SecretArn` and
/// `MasterUserSecret.SecretArn` do not.
pub fn is_credential_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    CREDENTIAL_WORDS.iter().any(|w| lower.contains(w))
        && !NON_SECRET_ENDINGS.iter().any(|e| lower.ends_with(e))
}

/// True for the entries of [`SECRET_VALUED_ATTRIBUTES`].
pub fn is_secret_valued_attribute(resource_type: &str, attr: &str) -> bool {
    SECRET_VALUED_ATTRIBUTES
        .iter()
        .any(|(t, a)| *t == resource_type && *a == attr)
}

/// True when an object key anywhere inside `v` passes [`is_credential_name`].
pub fn has_credential_field(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, x)| is_credential_name(k) || has_credential_field(x)),
        Value::Array(items) => items.iter().any(has_credential_field),
        _ => false,
    }
}

/// True when a string anywhere inside `v` contains the mask `***`.
pub fn carries_mask(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains(MASK),
        Value::Object(m) => m.values().any(carries_mask),
        Value::Array(items) => items.iter().any(carries_mask),
        _ => false,
    }
}

/// The class that the attribute alone (its name and its resource's type) puts it in,
/// before any value is seen: the first three classes. Such an attribute is never read
/// live and never copied (docs/repairs.md, "The rewrite").
pub fn never_copied_attribute(resource_type: &str, attr: &str) -> Option<CredentialClass> {
    use CredentialClass::*;
    if is_credential_name(attr) {
        Some(CredentialNamedAttribute)
    } else if crate::state::is_custom_resource(resource_type) {
        Some(CustomResourceAttribute)
    } else if is_secret_valued_attribute(resource_type, attr) {
        Some(SecretValuedAttribute)
    } else {
        None
    }
}

/// The class that forbids copying `value`, attribute `attr` of a resource of
/// `resource_type` (cached in its record or read live), into another record; `None` when
/// it may be copied. The name and type checks ([`never_copied_attribute`]) run before
/// the value checks, in [`CredentialClass`] order.
pub fn never_copied(resource_type: &str, attr: &str, value: &Value) -> Option<CredentialClass> {
    use CredentialClass::*;
    if let Some(class) = never_copied_attribute(resource_type, attr) {
        Some(class)
    } else if carries_mask(value) {
        Some(Mask)
    } else if dynref::holds_reference(value) {
        Some(DynamicReference)
    } else if has_credential_field(value) {
        Some(CredentialNamedField)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_name_rule_words_and_endings() {
        for yes in [
            "SecretAccessKey",
            "MasterUserPassword",
            "ClientCREDENTIALS",
            "secret",
        ] {
            assert!(is_credential_name(yes), "{yes}");
        }
        for no in [
            "SecretArn",
            "MasterUserSecret.SecretArn",
            "SecretId",
            "PasswordName",
            "CredentialUrl",
            "SecretAlias",
            "SecretStatus",
            "Arn",
            "AccessKeyId",
        ] {
            assert!(!is_credential_name(no), "{no}");
        }
    }
}
