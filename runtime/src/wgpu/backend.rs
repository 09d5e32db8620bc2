//! The wgpu driver as a [`Backend`]: storage buffers, shader modules and
//! compute pipelines, bind groups and dispatches. Every call that may fail
//! validation runs in an error scope, so a failure is an error of the call
//! (with wgpu's message), never a panic.

use super::device::WgDevice;
use crate::gpu::args::Scalar;
use crate::gpu::backend::{Arg, Backend, Enqueue, Facts};
use crate::{BackendKind, Error, Result};
use hipacc_codegen::{wgsl_layout, ArgKind, KernelInfo, Language, Program, WgslSlot};
use std::sync::Arc;
use std::time::Duration;

/// Device memory of one image: a storage buffer of whole `u32` words.
pub(crate) struct WgMem {
    buffer: wgpu::Buffer,
    /// The image's size in bytes (the buffer may be up to 3 bytes longer).
    bytes: usize,
}

/// One entry point of a built module: its pipeline and resource layout.
pub(crate) struct WgEntry {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    slots: Vec<WgslSlot>,
    uniform_bytes: usize,
}

/// `n` rounded up to whole `u32` words, at least one.
fn words(n: usize) -> u64 {
    n.next_multiple_of(4).max(4) as u64
}

fn transfer_err(what: &str, e: impl std::fmt::Display) -> Error {
    hipacc_core::Error::Transfer(format!("wgpu: {what}: {e}")).into()
}

fn launch_err(entry: &str, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Launch {
        backend: BackendKind::Wgpu,
        kernel: entry.to_string(),
        message: format!("{what}: {e}"),
    }
}

impl WgDevice {
    /// Runs `f` in a validation error scope; `Err` holds wgpu's message.
    fn scoped<T>(&self, f: impl FnOnce() -> T) -> std::result::Result<T, String> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = f();
        match pollster::block_on(scope.pop()) {
            None => Ok(value),
            Some(e) => Err(e.to_string()),
        }
    }

    fn wait(&self) -> std::result::Result<(), String> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn storage(&self, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage,
            mapped_at_creation: false,
        })
    }

    /// A buffer holding `data` (padded to whole words).
    fn filled(&self, data: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let buffer = self.storage(words(data.len()), usage | wgpu::BufferUsages::COPY_DST);
        self.queue.write_buffer(&buffer, 0, &padded(data));
        buffer
    }
}

/// `data` padded with zeros to whole `u32` words.
fn padded(data: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    v.resize(words(data.len()) as usize, 0);
    v
}

/// The uniform struct of a launch's scalars, laid out as codegen declared.
fn uniform_bytes(args: &[Arg<WgDevice>], slots: &[WgslSlot], size: usize) -> Vec<u8> {
    let mut out = vec![0u8; size];
    for (arg, slot) in args.iter().zip(slots) {
        let (Arg::Scalar(s), WgslSlot::Uniform { offset, .. }) = (arg, slot) else {
            continue;
        };
        let (s, offset) = (*s, *offset);
        let bytes: Vec<u8> = match s {
            Scalar::U8(v) => u32::from(v).to_le_bytes().to_vec(),
            Scalar::U16(v) => u32::from(v).to_le_bytes().to_vec(),
            Scalar::I32(v) => v.to_le_bytes().to_vec(),
            Scalar::U32(v) => v.to_le_bytes().to_vec(),
            Scalar::F32(v) => v.to_le_bytes().to_vec(),
            Scalar::F64(v) => v.to_le_bytes().to_vec(),
        };
        out[offset..offset + bytes.len()].copy_from_slice(&bytes);
    }
    out
}

impl Backend for WgDevice {
    type Mem = WgMem;
    type Program = wgpu::ShaderModule;
    type Entry = WgEntry;
    /// A storage buffer per mask binding.
    type MaskCopy = wgpu::Buffer;

    const KIND: BackendKind = BackendKind::Wgpu;
    const LANGUAGE: Language = Language::Wgsl;
    #[cfg(feature = "conformance")]
    /// Each pipeline is compiled from the whole module: the conformance
    /// suite on lavapipe took 150 s with its kernels batched 64 to a
    /// module, 137 s one module each.
    const BATCHED_BUILDS_PAY: bool = false;

    fn facts(&self) -> &Facts {
        &self.facts
    }

    fn allocate(&self, bytes: usize) -> Result<WgMem> {
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let buffer = self
            .scoped(|| self.storage(words(bytes), usage))
            .map_err(|e| transfer_err(&format!("allocating {bytes} bytes"), e))?;
        Ok(WgMem { buffer, bytes })
    }

    fn upload(&self, mem: &WgMem, data: &[u8]) -> Result<()> {
        if data.len() != mem.bytes {
            return Err(transfer_err(
                "upload",
                format!("{} bytes into {}", data.len(), mem.bytes),
            ));
        }
        self.scoped(|| self.queue.write_buffer(&mem.buffer, 0, &padded(data)))
            .map_err(|e| transfer_err("upload", e))
    }

    fn download(&self, mem: &WgMem, dst: &mut [u8]) -> Result<()> {
        if dst.len() != mem.bytes {
            return Err(transfer_err(
                "read",
                format!("bug: {} bytes into {}", mem.bytes, dst.len()),
            ));
        }
        let size = words(mem.bytes);
        let staging = self
            .scoped(|| {
                let staging = self.storage(
                    size,
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                );
                let mut encoder = self
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
                encoder.copy_buffer_to_buffer(&mem.buffer, 0, &staging, 0, size);
                self.queue.submit([encoder.finish()]);
                staging
            })
            .map_err(|e| transfer_err("read", e))?;
        let slice = staging.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.wait().map_err(|e| transfer_err("read", e))?;
        rx.recv()
            .map_err(|e| transfer_err("read", e))?
            .map_err(|e| transfer_err("read", e))?;
        {
            let view = slice
                .get_mapped_range()
                .map_err(|e| transfer_err("read", e))?;
            dst.copy_from_slice(&view[..mem.bytes]);
        }
        staging.unmap();
        Ok(())
    }

    fn build(&self, program: &Program) -> std::result::Result<wgpu::ShaderModule, String> {
        self.scoped(|| {
            self.device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: None,
                    source: wgpu::ShaderSource::Wgsl(program.source.as_str().into()),
                })
        })
        .map_err(|e| format!("creating the shader module: {e}"))
    }

    fn entry(
        &self,
        program: &Arc<wgpu::ShaderModule>,
        info: &KernelInfo,
    ) -> std::result::Result<WgEntry, String> {
        let (slots, uniform_bytes) = wgsl_layout(&info.args);
        let mut entries = vec![wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }];
        for (arg, slot) in info.args.iter().zip(&slots) {
            let WgslSlot::Binding(binding) = *slot else {
                continue;
            };
            entries.push(wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage {
                        read_only: arg.kind != ArgKind::OutputBuffer,
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            });
        }
        self.scoped(|| {
            let layout = self
                .device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: None,
                    entries: &entries,
                });
            let pipeline_layout =
                self.device
                    .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                        label: None,
                        bind_group_layouts: &[Some(&layout)],
                        immediate_size: 0,
                    });
            let pipeline = self
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&info.entry),
                    layout: Some(&pipeline_layout),
                    module: program,
                    entry_point: Some(&info.entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
            WgEntry {
                pipeline,
                layout,
                slots,
                uniform_bytes,
            }
        })
        .map_err(|e| format!("creating the pipeline of `{}`: {e}", info.entry))
    }

    fn enqueue(&self, l: Enqueue<'_, Self>) -> Result<()> {
        let name = &l.info.entry;
        let e = l.entry;
        let [gx, gy] = l.launch.grid;
        let max = self.device.limits().max_compute_workgroups_per_dimension;
        if gx > max || gy > max {
            return Err(launch_err(
                name,
                "dispatch",
                format!("{gx}x{gy} workgroups; the device allows {max} per dimension"),
            ));
        }
        let mut masks = l.copies.lock();
        self.scoped(|| {
            let uniform = self.filled(
                &uniform_bytes(l.args, &e.slots, e.uniform_bytes),
                wgpu::BufferUsages::UNIFORM,
            );
            let mut buffers: Vec<(u32, wgpu::Buffer)> = Vec::new();
            for (arg, slot) in l.args.iter().zip(&e.slots) {
                if let (Arg::Mask(i), WgslSlot::Binding(b)) = (arg, slot) {
                    let bytes = l.mask(*i)?;
                    let buffer = masks.refresh(*i, bytes, |_| {
                        Ok(self.filled(bytes, wgpu::BufferUsages::STORAGE))
                    })?;
                    buffers.push((*b, buffer.clone()));
                }
            }
            let mut entries = vec![wgpu::BindGroupEntry {
                binding: 0,
                resource: uniform.as_entire_binding(),
            }];
            for (arg, slot) in l.args.iter().zip(&e.slots) {
                let WgslSlot::Binding(binding) = *slot else {
                    continue;
                };
                let buffer = match arg {
                    Arg::Buffer(mem) | Arg::Image { mem, .. } => &mem.buffer,
                    Arg::Mask(_) => match buffers.iter().find(|(b, _)| *b == binding) {
                        Some((_, buffer)) => buffer,
                        None => continue,
                    },
                    Arg::Scalar(_) => continue,
                };
                entries.push(wgpu::BindGroupEntry {
                    binding,
                    resource: buffer.as_entire_binding(),
                });
            }
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &e.layout,
                entries: &entries,
            });
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: self.clock.pass_writes(),
                });
                pass.set_pipeline(&e.pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            self.clock.after_pass(&mut encoder);
            self.clock
                .submit(&self.queue, || self.queue.submit([encoder.finish()]));
            Ok(())
        })
        .map_err(|err| launch_err(name, "dispatch", err))?
    }

    fn synchronize(&self) -> Result<()> {
        self.wait().map_err(|e| Error::Launch {
            backend: BackendKind::Wgpu,
            kernel: String::new(),
            message: format!("waiting for the queue: {e}"),
        })
    }

    /// GPU timestamps of the launch's compute pass, or wall-clock time from
    /// submission to completion where the adapter has no timestamp queries
    /// (see `super::timing`).
    fn last_launch_time(&self) -> Option<Duration> {
        self.clock.last_duration(&self.device, &self.queue)
    }
}
