"""3D, robotics and science: DP3, Instant-NGP / nerfacto hash grids and 3D Gaussian splatting, and what each task's
cases take from them.

None of these models has a transformers config class, so every architecture is a `Published` record naming the
config file, dataclass or paper it comes from (the DP3 repo's hydra yamls, nerfstudio's NerfactoModelConfig, the
Instant-NGP paper and testbed, the 3DGS and gsplat trainers' arguments). See tests/case_shapes.py for the rules.
"""

from __future__ import annotations

import re
from typing import Any

from case_shapes import Family, Published
from fastkernels.manifest import Case

SCIENCE = Family("3d-robotics-science")

# Environments a DP3 policy step encodes observations for: its MetaWorld / Adroit / DexArt runners step one
# environment at a time (n_envs: null), so one step encodes n_obs_steps point clouds.
DP3_ROLLOUT_ENVS = 1

DP3_YAML = "YanjieZe/3D-Diffusion-Policy 3D-Diffusion-Policy/diffusion_policy_3d/config/dp3.yaml"


def dp3(task_yaml: str, point_cloud_points: int, agent_pos_dim: int, imagined_robot_points: int = 0) -> Published:
    """dp3.yaml's policy (pointcloud_encoder_cfg in_channels 3, encoder_output_dim 64, use_pc_color false, n_obs_steps
    2, dataloader batch_size 128; DP3Encoder's state_mlp_size (64, 64)) under one task yaml's shape_meta."""
    return Published(source=f"{DP3_YAML} (policy, n_obs_steps, dataloader); config/task/{task_yaml} (shape_meta.obs: "
                            "point_cloud, agent_pos, imagin_robot); model/vision/pointnet_extractor.py DP3Encoder",
                     in_channels=3, encoder_output_dim=64, use_pc_color=False, state_mlp_size=(64, 64),
                     n_obs_steps=2, batch_size=128, point_cloud_points=point_cloud_points,
                     agent_pos_dim=agent_pos_dim, imagined_robot_points=imagined_robot_points)


@SCIENCE.architecture("dp3")
def dp3_default_task() -> Published:
    """DP3 as dp3.yaml composes it, with its default task (adroit_hammer: 512 points, as MetaWorld's)."""
    return dp3("adroit_hammer.yaml", point_cloud_points=512, agent_pos_dim=24)


@SCIENCE.architecture("dp3_metaworld")
def dp3_metaworld() -> Published:
    """DP3 on a MetaWorld task (every metaworld_*.yaml has the same shape_meta)."""
    return dp3("metaworld_assembly.yaml", point_cloud_points=512, agent_pos_dim=9)


@SCIENCE.architecture("dp3_dexart")
def dp3_dexart() -> Published:
    """DP3 on a DexArt task (every dexart_*.yaml has the same shape_meta, the imagined robot included)."""
    return dp3("dexart_laptop.yaml", point_cloud_points=1024, agent_pos_dim=32, imagined_robot_points=96)


@SCIENCE.architecture("nerfacto")
def nerfacto() -> Published:
    """nerfstudio's nerfacto: its field's hash grid and the samples one training step evaluates."""
    return Published(source="nerfstudio-project/nerfstudio nerfstudio/models/nerfacto.py NerfactoModelConfig "
                            "(num_levels, base_res, max_res, log2_hashmap_size, features_per_level, "
                            "num_nerf_samples_per_ray); nerfstudio/configs/method_configs.py 'nerfacto' "
                            "(train_num_rays_per_batch)",
                     num_levels=16, base_res=16, max_res=2048, log2_hashmap_size=19, features_per_level=2,
                     num_nerf_samples_per_ray=48, train_num_rays_per_batch=4096)


@SCIENCE.architecture("instant_ngp")
def instant_ngp() -> Published:
    """Instant-NGP's NeRF hash grid (tiny-cuda-nn HashGrid names) on a unit-scale scene, and its training batch."""
    return Published(source="Muller et al., Instant Neural Graphics Primitives (SIGGRAPH 2022), Table 1 and sec. 5.4 "
                            "(L 16, F 2, T 2^19, N_min 16 for NeRF), as NVlabs/instant-ngp configs/nerf/base.json "
                            "first shipped them; src/testbed.cu: desired_resolution 2048 x aabb_scale; "
                            "target_batch_size 2^18 samples",
                     n_levels=16, n_features_per_level=2, log2_hashmap_size=19, base_resolution=16,
                     desired_resolution=2048, aabb_scale=1, target_batch_size=2**18)


@SCIENCE.architecture("3dgs")
def gaussian_splatting() -> Published:
    """3D Gaussian Splatting (Kerbl et al. 2023), the reference trainer."""
    return Published(source="graphdeco-inria/gaussian-splatting arguments/__init__.py ModelParams.sh_degree",
                     sh_degree=3)


@SCIENCE.architecture("gsplat")
def gsplat() -> Published:
    """gsplat's simple_trainer, which raises the SH degree in use by one every sh_degree_interval steps."""
    return Published(source="nerfstudio-project/gsplat examples/simple_trainer.py Config (sh_degree, "
                            "sh_degree_interval)", sh_degree=3, sh_degree_interval=1000)


def dp3_point_cloud(config: Published, case: Case) -> dict[str, Any]:
    """What DP3Encoder hands its point-cloud extractor: xyz (xyzrgb with use_pc_color) of the task's points followed
    by the imagined robot's, one cloud per observation step of every sample (the batch flattened with n_obs_steps)."""
    samples = config.batch_size if "_train_" in case.name else DP3_ROLLOUT_ENVS
    return {"in_channels": 6 if config.use_pc_color else config.in_channels,
            "out_channels": config.encoder_output_dim,
            "num_points": config.point_cloud_points + config.imagined_robot_points,
            "batch": samples * config.n_obs_steps}


@SCIENCE.derives("dp3_point_encoder")
def dp3_point_encoder(config: Published, case: Case) -> dict[str, Any]:
    return dp3_point_cloud(config, case)


@SCIENCE.derives("dp3_encoder")
def dp3_encoder(config: Published, case: Case) -> dict[str, Any]:
    """The task's state MLP is DP3Encoder's default state_mlp_size, fixed in its eager module."""
    assert config.state_mlp_size == (64, 64)
    return {**dp3_point_cloud(config, case), "state_dim": config.agent_pos_dim}


@SCIENCE.derives("hash_grid_encoding")
def hash_grid_encoding(config: Published, case: Case) -> dict[str, Any]:
    """nerfstudio's HashEncoding arguments, from nerfstudio's names or tiny-cuda-nn's; the points of a training step
    where the case is one (a rendering pass's count is the workload's)."""
    if hasattr(config, "n_levels"):
        expected = {"num_levels": config.n_levels, "min_res": config.base_resolution,
                    "max_res": config.desired_resolution * config.aabb_scale,
                    "log2_hashmap_size": config.log2_hashmap_size, "features_per_level": config.n_features_per_level}
        training_samples = config.target_batch_size
    else:
        expected = {"num_levels": config.num_levels, "min_res": config.base_res, "max_res": config.max_res,
                    "log2_hashmap_size": config.log2_hashmap_size, "features_per_level": config.features_per_level}
        training_samples = config.train_num_rays_per_batch * config.num_nerf_samples_per_ray
    if "_render_" not in case.name:
        expected["points"] = training_samples
    return expected


@SCIENCE.derives("spherical_harmonics")
def spherical_harmonics(config: Published, case: Case) -> dict[str, Any]:
    """All (sh_degree + 1)^2 coefficients are stored; every degree is used once warm-up is over, and during gsplat's
    warm-up the degree the case names (`_degree1_`), one more each sh_degree_interval steps."""
    warmup = re.search(r"_degree(\d+)_", case.name)
    degree = min(int(warmup.group(1)), config.sh_degree) if warmup else config.sh_degree
    return {"num_coeffs": (config.sh_degree + 1) ** 2, "degrees_to_use": degree}
