//! SSM Parameter Store reads of the export plan: a parameter's type and value, read with
//! `WithDecryption: false` (docs/export.md, "Children": a SecureString is never read decrypted;
//! what its type means is decided in `cdkd_core::export::params`).

use aws_config::{Region, SdkConfig};
use cdkd_core::text::flatten_str;

use crate::calls::CallCounter;
use crate::sdk_error::{classify, ErrorClass};
use crate::sdk_message::readable;

/// A parameter as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsmParameter {
    /// `String`, `StringList` or `SecureString`.
    pub param_type: String,
    /// The stored value (a SecureString's ciphertext, never decrypted).
    pub value: String,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SsmError {
    #[error("SSM parameter {name} does not exist")]
    NotFound { name: String },
    #[error("cannot read SSM parameter {name}: {message}")]
    Failed {
        name: String,
        message: String,
        class: ErrorClass,
    },
}

impl SsmError {
    pub fn class(&self) -> ErrorClass {
        match self {
            SsmError::NotFound { .. } => ErrorClass::NotFound,
            SsmError::Failed { class, .. } => *class,
        }
    }
}

/// The SSM client of one region.
#[derive(Debug, Clone)]
pub struct Ssm {
    pub client: aws_sdk_ssm::Client,
}

impl Ssm {
    /// A client for `region` (the SDK's own region when `None`), counting its requests
    /// in `calls` when given.
    pub fn new(sdk: &SdkConfig, region: Option<&str>, calls: Option<&CallCounter>) -> Self {
        let mut b = aws_sdk_ssm::config::Builder::from(sdk);
        if let Some(r) = region {
            b = b.region(Region::new(r.to_string()));
        }
        if let Some(c) = calls {
            b = b.interceptor(c.clone());
        }
        Ssm {
            client: aws_sdk_ssm::Client::from_conf(b.build()),
        }
    }

    /// `GetParameter(Name, WithDecryption: false)`.
    pub async fn get_parameter(&self, name: &str) -> Result<SsmParameter, SsmError> {
        let out = self
            .client
            .get_parameter()
            .name(name)
            .with_decryption(false)
            .send()
            .await
            .map_err(|e| {
                if e.as_service_error()
                    .is_some_and(|s| s.is_parameter_not_found())
                {
                    SsmError::NotFound {
                        name: flatten_str(name),
                    }
                } else {
                    SsmError::Failed {
                        name: flatten_str(name),
                        class: classify(&e),
                        message: readable(&e),
                    }
                }
            })?;
        let p = out.parameter();
        Ok(SsmParameter {
            param_type: p
                .and_then(|p| p.r#type())
                .map(|t| t.as_str().to_string())
                .unwrap_or_default(),
            value: p.and_then(|p| p.value()).unwrap_or_default().to_string(),
        })
    }
}
