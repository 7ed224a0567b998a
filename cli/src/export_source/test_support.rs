//! What the tests of the export sources share: the fixtures and a scratch directory.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::app::fresh_dir;
use super::types::{NestedLink, TemplateFormat, TemplateSet};

pub(super) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export")
}

pub(super) const ROOT: &str = "ExportNested";
pub(super) const MIDDLE_ID: &str = "MiddleNestedStackMiddleNestedStackResource9C3D5E7F";
pub(super) const LEAF_ID: &str = "LeafNestedStackLeafNestedStackResource7B9D1F3A";
pub(super) const MIDDLE_FILE: &str = "ExportNestedMiddle2A4C6E8B.nested.template.json";
pub(super) const LEAF_FILE: &str = "ExportNestedMiddleLeaf5E7A9C1D.nested.template.json";

/// A scratch directory removed when dropped.
pub(super) struct Scratch(pub(super) PathBuf);
impl Scratch {
    pub(super) fn new() -> Self {
        Scratch(fresh_dir("cdkd-flow-test").expect("temp dir"))
    }
    pub(super) fn path(&self) -> &Path {
        &self.0
    }
    pub(super) fn write(&self, name: &str, body: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, body).expect("write");
        p
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}

/// A copy of the nested fixture assembly to break.
pub(super) fn nested_copy() -> Scratch {
    let s = Scratch::new();
    copy_dir(&fixtures().join("nested.out"), s.path());
    s
}

pub(super) fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    f(&mut v);
    std::fs::write(path, serde_json::to_vec_pretty(&v).expect("ser")).expect("write");
}

pub(super) fn assert_nested_fixture(set: &TemplateSet, dir: &Path) {
    let middle = format!("{ROOT}~{MIDDLE_ID}");
    let leaf = format!("{middle}~{LEAF_ID}");
    assert_eq!(set.root.stack, ROOT);
    assert_eq!(set.root.source, dir.join("ExportNested.template.json"));
    assert_eq!(set.display_name.as_deref(), Some(ROOT));
    assert_eq!(set.region.as_deref(), Some("us-east-1"));
    assert_eq!(set.account.as_deref(), Some("123456789012"));
    let names: Vec<_> = set.stacks().map(|s| s.stack.as_str()).collect();
    assert_eq!(names, [ROOT, middle.as_str(), leaf.as_str()]);
    assert_eq!(
        set.children[0].parent,
        Some(NestedLink {
            parent: ROOT.into(),
            logical_id: MIDDLE_ID.into()
        })
    );
    assert_eq!(
        set.children[1].parent,
        Some(NestedLink {
            parent: middle.clone(),
            logical_id: LEAF_ID.into()
        })
    );
    assert_eq!(set.children[0].source, dir.join(MIDDLE_FILE));
    assert_eq!(set.children[1].source, dir.join(LEAF_FILE));
    assert!(set.nested_without_template.is_empty());
    assert!(set.root.template["Resources"]["DataBucketE3889A50"].is_object());
    assert!(set.children[0].template["Resources"]["WorkQueue6B4B0D5A"].is_object());
    assert!(set.children[1].template["Resources"]["QueueUrlParameter2F3E8A6B"].is_object());
    assert!(set.stacks().all(|s| s.format == TemplateFormat::Json));
}
