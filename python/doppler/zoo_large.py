"""Zoo models at the sizes they are used at (random weights, nothing
downloaded), for the benchmarks: decomposition and placement
(scripts/decompose_table.py --zoo), speed (bench/zoo_speed.py) and the
learning sets of issue 32. Not in doppler.zoo.MODELS, so the test suite
never builds them; `doppler.zoo.build` and `available` take their names.

Shapes follow common inference settings: images 224x224 (batch 8 for the
CNNs, 4 for ViT-B/16), BERT-base at batch 8 x 128 tokens, a LLaMA of 4
layers at width 2048 on 2 x 256 tokens.
"""

import collections

import torch


def _tv():
    import torchvision
    return torchvision


def _tf():
    import transformers
    return transformers


def _images(batch):
    return torch.randn(batch, 3, 224, 224)


def resnet18_224():
    return _tv().models.resnet18(), (_images(8),)


def resnet50_224():
    return _tv().models.resnet50(), (_images(8),)


def vit_b16_224():
    model = _tv().models.vit_b_16()
    torch.nn.init.normal_(model.heads.head.weight, std=0.02)  # torchvision zeroes it
    return model, (_images(4),)


def bert_base_128():
    tf = _tf()
    config = tf.BertConfig()  # BERT-base: 12 layers, width 768, 12 heads
    ids = torch.randint(0, config.vocab_size, (8, 128))
    return tf.BertModel(config), (ids, torch.ones(8, 128, dtype=torch.long))


def llama_2048():
    tf = _tf()
    config = tf.LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5504,
                            num_hidden_layers=4, num_attention_heads=16,
                            num_key_value_heads=16, max_position_embeddings=512,
                            use_cache=False)
    ids = torch.randint(0, config.vocab_size, (2, 256))
    return tf.LlamaForCausalLM(config), (ids,)


# name -> (library, builder)
LARGE = collections.OrderedDict([
    ("resnet18_224", ("torchvision", resnet18_224)),
    ("resnet50_224", ("torchvision", resnet50_224)),
    ("vit_b16_224", ("torchvision", vit_b16_224)),
    ("bert_base_128", ("transformers", bert_base_128)),
    ("llama_2048", ("transformers", llama_2048)),
])
