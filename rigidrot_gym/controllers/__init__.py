"""Classical attitude controllers with stable-baselines3's ``predict()`` interface."""

from rigidrot_gym.controllers.base import Controller
from rigidrot_gym.controllers.quaternion_feedback import QuaternionFeedback

__all__ = ["Controller", "QuaternionFeedback"]
