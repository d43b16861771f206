//! Format-free types: what every input becomes once decoded. Nothing here
//! knows about protobuf, XSpace planes or file layouts.

pub mod allocator;
pub mod device_memory;
pub mod program;
pub mod torch_snapshot;

pub use allocator::{Allocator, AllocatorEvent, AllocatorEventKind, ProgramRun};
pub use device_memory::{DeviceMemorySnapshot, Frame, Label, LabelValue, LiveGroup, Stack};
pub use program::{
    Allocation, BufferAssignment, EntryInterface, HeapEvent, HeapEventKind, HeapTrace, Inconsistency, InputOutputAlias,
    Instruction, LogicalBuffer, Module, PeakBuffers, ScopedAllocation, SourceLocation,
};
pub use torch_snapshot::TorchSnapshot;

/// An accelerator of a profiled host, as its plane describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// The host and plane, `vm:/device:GPU:0`.
    pub name: String,
    /// The device's model, `NVIDIA H200`, when the profile names it.
    pub model: Option<String>,
    /// The memory the device has (the plane's `memory_size` stat).
    pub memory_bytes: i64,
}

/// Everything read from one input (a file, a run directory or a dump directory).
#[derive(Debug, Default)]
pub struct Capture {
    /// The input as the user named it.
    pub input: String,
    /// Compiled programs with their buffer assignments, deduplicated by program id.
    pub modules: Vec<Module>,
    /// Live buffers and executables from a JAX device memory profile.
    pub device_memory: Option<DeviceMemorySnapshot>,
    /// A PyTorch CUDA memory snapshot.
    pub torch_snapshot: Option<TorchSnapshot>,
    /// The hosts whose profiles were read; empty for HLO-only inputs.
    pub hosts: Vec<String>,
    /// Allocators of every host, with their allocation and deallocation events.
    pub allocators: Vec<Allocator>,
    /// The devices the profile describes, with their memory.
    pub devices: Vec<Device>,
    /// Problems that did not stop the read: a corrupt host file, an undecodable module.
    pub warnings: Vec<String>,
    /// Host planes (`/host:CPU of vm.xplane.pb`) whose allocator events were
    /// lost to damage, wholly or after the damage: with none read, the
    /// profile is not one that records none.
    pub damaged_allocator_planes: Vec<String>,
}
