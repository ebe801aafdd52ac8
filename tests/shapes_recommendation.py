"""Recommendation and retrieval: ColBERTv2, DLRM / DLRMv2 and LightGCN, and what each task's cases take from them.

ColBERTv2's encoder is BERT-base, whose config is BertConfig's defaults; its own settings (projection dim, query and
document lengths) live in the checkpoint's artifact.metadata, which transformers has no class for. DLRM and LightGCN
have no transformers config at all: their values are `Published` records naming the reference run scripts, README
logs and argument defaults they come from. See tests/case_shapes.py for the rules.
"""

from __future__ import annotations

import re
from statistics import mean
from typing import Any

from transformers import BertConfig

from case_shapes import Family, Published
from fastkernels.manifest import Case

RECOMMENDATION = Family("recommendation")

# Rows of every DLRM table in tasks/L3/dlrm: Criteo's tables reach 40M rows, and 26 of them in the float64 oracle
# would need ~200 GB, so the task gives each of its 26 tables 250k rows (a benchmark choice, see its task.yaml).
DLRM_ROWS_PER_TABLE = 250_000
# Largest table tasks/L1/embedding_bag builds: DLRMv2's 40M-row tables would need 41 GB in the float64 oracle, so
# they are capped at 4M rows (still 20x the H200's L2); smaller tables keep their published size.
EMBEDDING_BAG_MAX_ROWS = 4_000_000


@RECOMMENDATION.architecture("colbertv2")
def colbertv2() -> Published:
    """colbert-ir/colbertv2.0: a BERT-base encoder (its config.json is bert-base-uncased's, which BertConfig's
    defaults are) under ColBERT's settings."""
    return Published(source="huggingface.co/colbert-ir/colbertv2.0 artifact.metadata (ColBERTConfig: dim, "
                            "query_maxlen, doc_maxlen); its config.json is bert-base-uncased's BertConfig",
                     encoder=BertConfig(), dim=128, query_maxlen=32, doc_maxlen=180)


@RECOMMENDATION.architecture("dlrm")
def dlrm_criteo_terabyte() -> Published:
    """MLPerf DLRM (v1) on Criteo Terabyte, one-hot: the reference run that torchrec's DLRM example reproduces."""
    return Published(source="facebookresearch/dlrm bench/run_and_time.sh (MLPerf reference, --data-set=terabyte): "
                            "--arch-sparse-feature-size=128 --arch-mlp-bot=13-512-256-128 "
                            "--arch-mlp-top=1024-1024-512-256-1 --max-ind-range=40000000; Criteo's 26 categorical "
                            "features of one value each (torchrec.datasets.criteo DEFAULT_CAT_NAMES)",
                     embedding_dim=128, dense_in_features=13, dense_arch_layer_sizes=(512, 256, 128),
                     over_arch_layer_sizes=(1024, 1024, 512, 256, 1), num_sparse_features=26, hotness=1)


@RECOMMENDATION.architecture("dlrmv2")
def dlrmv2() -> Published:
    """MLPerf DLRMv2 (torchrec DLRM on the synthetic multi-hot Criteo 1TB), its reference training command."""
    rows = (40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956, 405282, 10, 2209, 11938, 155, 4,
            976, 14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36)
    hotness = (3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1)
    return Published(source="mlcommons/training recommendation_v2/torchrec_dlrm/README.MD ('Running the MLPerf DLRM "
                            "v2 benchmark'): --embedding_dim 128 --dense_arch_layer_sizes 512,256,128 "
                            "--over_arch_layer_sizes 1024,1024,512,256,1 --num_embeddings_per_feature ... "
                            "--multi_hot_sizes ...; dlrm_main.py: dense_in_features = len(DEFAULT_INT_NAMES), "
                            "sum-pooled EmbeddingBagConfig tables",
                     embedding_dim=128, dense_in_features=13, dense_arch_layer_sizes=(512, 256, 128),
                     over_arch_layer_sizes=(1024, 1024, 512, 256, 1), num_embeddings_per_feature=rows,
                     num_sparse_features=len(rows), multi_hot_sizes=hotness, pooling="sum")


def lightgcn(dataset: str, num_users: int, num_items: int, num_train_interactions: int) -> Published:
    """A LightGCN dataset as the reference code loads it: the training split's graph, 64-wide embeddings."""
    return Published(source=f"LightGCN (He et al., SIGIR 2020) Table 1 ({dataset} users, items) and the training "
                            "split of its data files as kuandeng/LightGCN's README logs report it (n_train); "
                            "embedding size: gusye1234/LightGCN-PyTorch code/parse.py --recdim default 64",
                     num_users=num_users, num_items=num_items, num_train_interactions=num_train_interactions,
                     embedding_dim=64)


@RECOMMENDATION.architecture("lightgcn_gowalla")
def lightgcn_gowalla() -> Published:
    """LightGCN on Gowalla (1027370 interactions in all, 810128 of them for training)."""
    return lightgcn("Gowalla", num_users=29858, num_items=40981, num_train_interactions=810128)


@RECOMMENDATION.architecture("lightgcn_yelp2018")
def lightgcn_yelp2018() -> Published:
    """LightGCN on Yelp2018 (1561406 interactions in all)."""
    return lightgcn("Yelp2018", num_users=31668, num_items=38048, num_train_interactions=1237259)


@RECOMMENDATION.architecture("lightgcn_amazon_book")
def lightgcn_amazon_book() -> Published:
    """LightGCN on Amazon-Book (2984108 interactions in all)."""
    return lightgcn("Amazon-Book", num_users=52643, num_items=91599, num_train_interactions=2380730)


def late_interaction_lengths(config: Published) -> dict[str, int]:
    """ColBERT pads every query to query_maxlen ([MASK] tokens score too) and truncates documents to doc_maxlen."""
    return {"query_len": config.query_maxlen, "doc_len": config.doc_maxlen}


@RECOMMENDATION.derives("colbert_scoring")
def colbert_scoring(config: Published, case: Case) -> dict[str, Any]:
    return {"hidden_size": config.encoder.hidden_size, "dim": config.dim, **late_interaction_lengths(config)}


@RECOMMENDATION.derives("maxsim")
def maxsim(config: Published, case: Case) -> dict[str, Any]:
    return {"dim": config.dim, **late_interaction_lengths(config)}


def uniform_hotness(config: Published) -> int:
    """Indices per feature: one for one-hot Criteo; the dlrm task draws one hotness for every feature, so DLRMv2's
    per-feature multi_hot_sizes are taken at their mean, rounded (214 / 26 = 8.2 -> 8)."""
    sizes = getattr(config, "multi_hot_sizes", None)
    return round(mean(sizes)) if sizes else config.hotness


@RECOMMENDATION.derives("dlrm")
def dlrm(config: Published, case: Case) -> dict[str, Any]:
    return {"num_embeddings": DLRM_ROWS_PER_TABLE, "embedding_dim": config.embedding_dim,
            "num_sparse_features": config.num_sparse_features, "dense_in_features": config.dense_in_features,
            "dense_arch_layer_sizes": config.dense_arch_layer_sizes,
            "over_arch_layer_sizes": config.over_arch_layer_sizes, "bag_size": uniform_hotness(config)}


@RECOMMENDATION.derives("dlrm_bottom_mlp")
def dlrm_bottom_mlp(config: Published, case: Case) -> dict[str, Any]:
    return {"in_features": config.dense_in_features, "layer_sizes": config.dense_arch_layer_sizes}


@RECOMMENDATION.derives("dlrm_dot_interaction")
def dlrm_dot_interaction(config: Published, case: Case) -> dict[str, Any]:
    """The dense features enter the interaction as the bottom MLP's output, as wide as an embedding."""
    assert config.dense_arch_layer_sizes[-1] == config.embedding_dim
    return {"num_sparse_features": config.num_sparse_features, "embedding_dim": config.embedding_dim}


@RECOMMENDATION.derives("embedding_bag")
def embedding_bag(config: Published, case: Case) -> dict[str, Any]:
    """The table of the sparse feature the case names (`dlrmv2_table10_...` is feature 10, counting from 0)."""
    feature = int(re.match(r"dlrmv2_table(\d+)_", case.name).group(1))
    return {"num_embeddings": min(config.num_embeddings_per_feature[feature], EMBEDDING_BAG_MAX_ROWS),
            "embedding_dim": config.embedding_dim, "mode": config.pooling,
            "bag_size": config.multi_hot_sizes[feature]}


@RECOMMENDATION.derives("sparse_propagation")
def sparse_propagation(config: Published, case: Case) -> dict[str, Any]:
    return {"num_users": config.num_users, "num_items": config.num_items,
            "num_interactions": config.num_train_interactions, "dim": config.embedding_dim}
