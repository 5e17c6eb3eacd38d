"""Zoo models at the sizes they are used at (random weights, nothing
downloaded), for the benchmarks: decomposition and placement
(scripts/decompose_table.py --zoo), speed (bench/zoo_speed.py) and the
learning sets of issue 32. Not in doppler.zoo.MODELS, so the test suite
never builds them; `doppler.zoo.build` and `available` take their names.

Shapes follow common inference settings: images 224x224 (batch 8 for the
CNNs, 4 for the ViTs), the encoders (BERT-base, RoBERTa-base, DistilBERT)
at batch 8 x 128 tokens, GPT-2 small on 2 x 512, decoders of 4 layers at
width 2048 (LLaMA, Mistral and Qwen2 with grouped-query attention) on
2 x 256 tokens. One of each zoo model (python/doppler/zoo.py).
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


# The other zoo families (python/doppler/zoo.py) at their usual sizes: the
# models of torchvision and transformers' default configurations (base or
# tiny), the decoders at a LLaMA-like width of 2048 with 4 layers.

def mobilenet_v2_224():
    return _tv().models.mobilenet_v2(), (_images(8),)


def efficientnet_b0_224():
    return _tv().models.efficientnet_b0(), (_images(8),)


def convnext_tiny_224():
    return _tv().models.convnext_tiny(), (_images(8),)


def _ids(config, batch, seq):
    return torch.randint(2, config.vocab_size, (batch, seq))


def gpt2_512():
    tf = _tf()
    config = tf.GPT2Config(use_cache=False)  # GPT-2 small: 12 layers, width 768
    return tf.GPT2LMHeadModel(config), (_ids(config, 2, 512),)


def _decoder_2048(tf, cls, config_cls, **extra):
    config = config_cls(vocab_size=32000, hidden_size=2048, num_hidden_layers=4,
                        num_attention_heads=16, max_position_embeddings=512,
                        use_cache=False, **extra)
    return cls(config), (_ids(config, 2, 256),)


def mistral_2048():
    tf = _tf()  # grouped-query attention: 4 key/value heads
    return _decoder_2048(tf, tf.MistralForCausalLM, tf.MistralConfig,
                         intermediate_size=7168, num_key_value_heads=4)


def qwen2_2048():
    tf = _tf()
    return _decoder_2048(tf, tf.Qwen2ForCausalLM, tf.Qwen2Config,
                         intermediate_size=5504, num_key_value_heads=2)


def _encoder_128(model, config):
    return model, (_ids(config, 8, 128), torch.ones(8, 128, dtype=torch.long))


def roberta_base_128():
    tf = _tf()
    config = tf.RobertaConfig()  # RoBERTa-base
    return _encoder_128(tf.RobertaModel(config), config)


def distilbert_128():
    tf = _tf()
    config = tf.DistilBertConfig()  # 6 layers, width 768
    return _encoder_128(tf.DistilBertModel(config), config)


def hf_vit_224():
    tf = _tf()  # ViT-base/16
    return tf.ViTModel(tf.ViTConfig()), (_images(4),)


def hf_convnext_224():
    tf = _tf()  # ConvNeXt-tiny
    return tf.ConvNextModel(tf.ConvNextConfig()), (_images(8),)


# name -> (library, builder)
LARGE = collections.OrderedDict([
    ("resnet18_224", ("torchvision", resnet18_224)),
    ("resnet50_224", ("torchvision", resnet50_224)),
    ("vit_b16_224", ("torchvision", vit_b16_224)),
    ("bert_base_128", ("transformers", bert_base_128)),
    ("llama_2048", ("transformers", llama_2048)),
    ("mobilenet_v2_224", ("torchvision", mobilenet_v2_224)),
    ("efficientnet_b0_224", ("torchvision", efficientnet_b0_224)),
    ("convnext_tiny_224", ("torchvision", convnext_tiny_224)),
    ("gpt2_512", ("transformers", gpt2_512)),
    ("mistral_2048", ("transformers", mistral_2048)),
    ("qwen2_2048", ("transformers", qwen2_2048)),
    ("roberta_base_128", ("transformers", roberta_base_128)),
    ("distilbert_128", ("transformers", distilbert_128)),
    ("hf_vit_224", ("transformers", hf_vit_224)),
    ("hf_convnext_224", ("transformers", hf_convnext_224)),
])
