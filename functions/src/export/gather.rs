//! Gathering what `cdkd_core::export::planner::plan_needs` asks for, in the record's region:
//! one `DescribeType` per distinct type of the whole tree, the rules of each security
//! group, each SSM parameter (`WithDecryption: false`), and a `DescribeStacks` per
//! destination name. The calls run concurrently, a few at a time; every request is
//! counted by operation.

use aws_config::SdkConfig;
use cdkd_aws::calls::CallCounter;
use cdkd_aws::cfn::{Cfn, CfnError};
use cdkd_aws::ec2::Ec2;
use cdkd_aws::ssm::{Ssm, SsmError};
use cdkd_core::export::names::Destination;
use cdkd_core::export::params::SsmRead;
use cdkd_core::export::plan::{Gathered, PlanNeeds};
use cdkd_core::export::registry::TypeFacts;
use cdkd_core::export::sg::SgLookup;
use futures::stream::{self, StreamExt};

use crate::error::StepError;

/// AWS reads in flight at once.
pub const GATHER_CONCURRENCY: usize = 8;

/// The clients of one region, sharing one request counter.
#[derive(Debug, Clone)]
pub struct Reads {
    pub cfn: Cfn,
    pub ssm: Ssm,
    pub ec2: Ec2,
    pub calls: CallCounter,
}

impl Reads {
    pub fn new(sdk: &SdkConfig, region: &str) -> Self {
        let calls = CallCounter::new();
        Reads {
            cfn: Cfn::new(sdk, Some(region), Some(&calls)),
            ssm: Ssm::new(sdk, Some(region), Some(&calls)),
            ec2: Ec2::new(sdk, Some(region), Some(&calls)),
            calls,
        }
    }
}

enum Job {
    Type(String),
    Group(String),
    Parameter(String),
    Destination(String),
}

enum Answer {
    Type(String, TypeFacts),
    Group(String, SgLookup),
    Parameter(String, SsmRead),
    Destination(String, Result<Destination, CfnError>),
}

async fn answer(reads: &Reads, job: Job) -> Answer {
    match job {
        Job::Type(t) => {
            let facts = match reads.cfn.describe_type(&t).await {
                Ok(a) => TypeFacts::from_describe_type(
                    a.schema.as_deref(),
                    a.provisioning_type.as_deref(),
                ),
                Err(e) => TypeFacts::unavailable(e.to_string()),
            };
            Answer::Type(t, facts)
        }
        Job::Group(g) => {
            let lookup = reads.ec2.security_group_rules(&g).await;
            Answer::Group(g, lookup)
        }
        Job::Parameter(n) => {
            let read = match reads.ssm.get_parameter(&n).await {
                Ok(p) => SsmRead::Value {
                    param_type: p.param_type,
                    value: p.value,
                },
                Err(SsmError::NotFound { .. }) => SsmRead::Failed("it does not exist".into()),
                Err(SsmError::Failed { message, .. }) => SsmRead::Failed(message),
            };
            Answer::Parameter(n, read)
        }
        Job::Destination(d) => {
            let r = reads.cfn.destination(&d).await;
            Answer::Destination(d, r)
        }
    }
}

/// Reads everything `needs` names. A destination that cannot be checked stops the plan
/// (docs/export.md, "Step details" S4: only "does not exist" means absent); every other failure is
/// an answer the plan reads (the registry's fallback table, a refused SSM read, a
/// security-group lookup that failed).
pub async fn gather(reads: &Reads, needs: &PlanNeeds) -> Result<Gathered, StepError> {
    let jobs = needs
        .types
        .iter()
        .cloned()
        .map(Job::Type)
        .chain(needs.security_groups.iter().cloned().map(Job::Group))
        .chain(needs.ssm_parameters.iter().cloned().map(Job::Parameter))
        .chain(needs.destinations.iter().cloned().map(Job::Destination));
    let answers: Vec<Answer> = stream::iter(jobs)
        .map(|j| answer(reads, j))
        .buffer_unordered(GATHER_CONCURRENCY)
        .collect()
        .await;
    let mut g = Gathered::default();
    for a in answers {
        match a {
            Answer::Type(t, f) => {
                g.types.insert(t, f);
            }
            Answer::Group(id, l) => {
                g.security_groups.insert(id, l);
            }
            Answer::Parameter(n, r) => {
                g.ssm.insert(n, r);
            }
            Answer::Destination(d, Ok(dest)) => {
                g.destinations.insert(d, dest);
            }
            Answer::Destination(_, Err(e)) => {
                return Err(if e.class().is_retryable() {
                    StepError::transient(e.to_string())
                } else {
                    StepError::refused(e.to_string())
                })
            }
        }
    }
    Ok(g)
}
